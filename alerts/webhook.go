package alerts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// webhook posts alerts as JSON to one endpoint, retrying failures that may
// pass (network errors, 5xx, 429) with a doubling backoff.
type webhook struct {
	name    string
	url     string
	format  string
	timeout time.Duration
	retries int
	backoff time.Duration
	repeat  time.Duration
	headers map[string]string
	client  *http.Client
	q       *queue
}

const maxBackoff = 30 * time.Second

func newWebhook(name string, w Webhook, client *http.Client) (*webhook, error) {
	u := w.URL
	if err := u.Resolve(); err != nil {
		return nil, fmt.Errorf("webhook %s: url: %w", name, err)
	}
	if err := checkURL(u.Reveal()); err != nil {
		return nil, fmt.Errorf("webhook %s: %w", name, err)
	}
	h := &webhook{name: name, url: u.Reveal(), format: w.Format, timeout: w.Timeout, retries: defaultRetries,
		backoff: w.Backoff, repeat: w.Repeat, headers: map[string]string{}, client: client}
	if h.format == "" {
		h.format = "generic"
	}
	if h.timeout == 0 {
		h.timeout = defaultWebhookTimeout
	}
	if w.Retries != nil {
		h.retries = *w.Retries
	}
	if h.backoff == 0 {
		h.backoff = defaultBackoff
	}
	if h.repeat == 0 && h.format == "alertmanager" {
		h.repeat = defaultAMRepeat
	}
	for k, v := range w.Headers {
		if err := v.Resolve(); err != nil {
			return nil, fmt.Errorf("webhook %s: header %s: %w", name, k, err)
		}
		h.headers[k] = v.Reveal()
	}
	return h, nil
}

// statusError is a response outside 2xx.
type statusError struct {
	code       int
	body       string
	retryAfter time.Duration
}

func (e *statusError) Error() string {
	if e.body == "" {
		return fmt.Sprintf("HTTP %d", e.code)
	}
	return fmt.Sprintf("HTTP %d: %s", e.code, e.body)
}

// send delivers alerts in one request (several only for Alertmanager, whose
// API takes a list), with retries; it gives up when ctx ends.
func (w *webhook) send(ctx context.Context, as []*alert) error {
	a := as[0]
	what := fmt.Sprintf("%s alert %s", a.State, a.Rule)
	if len(as) > 1 {
		what = fmt.Sprintf("%d alerts (first: %s)", len(as), what)
	}
	body, err := w.body(as)
	if err != nil {
		return fmt.Errorf("encode %s payload: %w", w.format, err)
	}
	wait := w.backoff
	for attempt := 1; ; attempt++ {
		err := w.post(ctx, body)
		if err == nil {
			return nil
		}
		var se *statusError
		retryable := !errors.As(err, &se) || se.code >= 500 || se.code == http.StatusTooManyRequests
		if !retryable || attempt > w.retries || ctx.Err() != nil {
			return fmt.Errorf("%s: %w (attempt %d of %d)", what, err, attempt, w.retries+1)
		}
		d := wait
		if se != nil && se.retryAfter > d {
			d = min(se.retryAfter, maxBackoff)
		}
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (gave up after attempt %d)", what, err, attempt)
		}
		wait = min(2*wait, maxBackoff)
	}
}

func (w *webhook) post(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		// As below: the cause, without the URL and the token it may hold.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("build the request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "heatsink-alerts")
	for k, v := range w.headers {
		req.Header.Set(k, v)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		// The URL may carry a token (Slack): report the cause without it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	se := &statusError{code: resp.StatusCode, body: strings.TrimSpace(string(msg))}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		se.retryAfter = time.Duration(s) * time.Second
	}
	return se
}

// batch is how many alerts one request may carry: Alertmanager takes a
// list; the generic and Slack bodies are one alert each, which receivers
// already parse, so those are queued rather than batched.
func (w *webhook) batch() int {
	if w.format == "alertmanager" {
		return maxBatch
	}
	return 1
}

// body renders the alerts in the webhook's format; only Alertmanager's
// takes more than one.
func (w *webhook) body(as []*alert) ([]byte, error) {
	switch w.format {
	case "slack":
		return json.Marshal(slackMessage{Text: as[0].text()})
	case "alertmanager":
		l := make([]amAlert, len(as))
		for i, a := range as {
			l[i] = a.alertmanager()
		}
		return json.Marshal(l)
	}
	return json.Marshal(as[0].generic())
}

// genericAlert is the body of the generic format.
type genericAlert struct {
	Rule        string            `json:"rule"`
	State       string            `json:"state"` // firing or cleared
	Severity    string            `json:"severity"`
	Measurement string            `json:"measurement"`
	Field       string            `json:"field,omitempty"`
	Series      string            `json:"series"`
	Tags        map[string]string `json:"tags"`
	Value       *float64          `json:"value,omitempty"`
	Threshold   *float64          `json:"threshold,omitempty"`
	Message     string            `json:"message"`
	Time        time.Time         `json:"time"`
	StartsAt    time.Time         `json:"starts_at"`
	EndsAt      *time.Time        `json:"ends_at,omitempty"`
}

func (a *alert) tagMap() map[string]string {
	m := make(map[string]string, len(a.Tags))
	for _, t := range a.Tags {
		m[t.Key] = t.Value
	}
	return m
}

func (a *alert) generic() genericAlert {
	g := genericAlert{Rule: a.Rule, State: a.State, Severity: a.Severity, Measurement: a.Measurement,
		Field: a.Field, Series: a.Series, Tags: a.tagMap(), Message: a.Message, Time: a.Time, StartsAt: a.StartsAt}
	if a.HasValue {
		v, t := a.Value, a.Threshold
		g.Value, g.Threshold = finite(v), finite(t)
	}
	if !a.EndsAt.IsZero() {
		e := a.EndsAt
		g.EndsAt = &e
	}
	return g
}

// finite drops values JSON cannot hold (a forecast that never crosses).
func finite(v float64) *float64 {
	if v != v || v > 1e308 || v < -1e308 {
		return nil
	}
	return &v
}

// slackMessage is Slack's incoming-webhook body.
type slackMessage struct {
	Text string `json:"text"`
}

func (a *alert) text() string {
	state := "FIRING"
	if a.State == schema.StateCleared {
		state = "cleared"
	}
	host := ""
	for _, t := range a.Tags {
		if t.Key == schema.TagHost {
			host = " on " + t.Value
		}
	}
	return fmt.Sprintf("[%s] %s %s%s: %s", strings.ToUpper(a.Severity), state, a.Rule, host, a.Message)
}

// amAlert is one element of Alertmanager's POST /api/v2/alerts body.
type amAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       *time.Time        `json:"endsAt,omitempty"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

func (a *alert) alertmanager() amAlert {
	labels := a.tagMap()
	labels["alertname"] = a.Rule
	labels["severity"] = a.Severity
	labels["measurement"] = a.Measurement
	ann := map[string]string{"summary": a.Message}
	if a.HasValue {
		ann["value"] = strconv.FormatFloat(a.Value, 'g', -1, 64)
		ann["threshold"] = strconv.FormatFloat(a.Threshold, 'g', -1, 64)
	}
	m := amAlert{Labels: labels, Annotations: ann, StartsAt: a.StartsAt}
	if !a.EndsAt.IsZero() {
		e := a.EndsAt
		m.EndsAt = &e
	}
	return m
}
