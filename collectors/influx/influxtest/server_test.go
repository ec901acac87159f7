package influxtest

import (
	"net/http"
	"strings"
	"testing"
)

func write(t *testing.T, s *Server, token, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL()+"/api/v2/write?bucket="+Bucket+"&precision=ns", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Token "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestServerStoresWhatIsWrittenAcrossRestart(t *testing.T) {
	t.Parallel()
	s := Start(t)
	if resp := write(t, s, "", "gpu,gpu=0,host=n1 temp_c=35.5,pstate=2i 1700000000000000000\n"); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("write: %s", resp.Status)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(s.URL() + "/ping"); err == nil {
		t.Fatal("server still answers after Stop")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	pts, err := s.Points()
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 1 {
		t.Fatalf("got %d points, want 1: %v", len(pts), pts)
	}
	p := pts[0]
	if p.SeriesKey() != "gpu,gpu=0,host=n1" || p.Time.UnixNano() != 1700000000000000000 {
		t.Errorf("got %s", p)
	}
	if v, _ := p.Float("temp_c"); v != 35.5 {
		t.Errorf("temp_c = %v", v)
	}
	if v, _ := p.Float("pstate"); v != 2 {
		t.Errorf("pstate = %v", v)
	}
}

func TestAuthServerRefusesWrongToken(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{Auth: true})
	if resp := write(t, s, "admin:wrong", "m f=1 1\n"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong token: %s, want 401", resp.Status)
	}
	if resp := write(t, s, s.Token, "m f=1 1\n"); resp.StatusCode != http.StatusNoContent {
		t.Errorf("admin token: %s, want 204", resp.Status)
	}
}
