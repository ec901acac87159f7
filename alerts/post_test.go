package alerts

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A request that cannot be built says why, without the URL (a Slack URL is
// its token), and is not mistaken for an HTTP 400 answer.
func TestWebhookPostNamesWhyARequestCannotBeBuilt(t *testing.T) {
	w := &webhook{name: "slack", url: "https://hooks.example.com/services/SECRET\x7f", timeout: time.Second, client: http.DefaultClient}
	err := w.post(context.Background(), []byte("{}"))
	if err == nil || !strings.Contains(err.Error(), "build the request: net/url: invalid control character in URL") {
		t.Fatalf("post = %v, want the reason the request cannot be built", err)
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error %q shows the URL", err)
	}
}
