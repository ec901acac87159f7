package fails

import "testing"

func TestPassesBeside(t *testing.T) { t.Log("a passing test's log, not shown") }

func TestFails(t *testing.T) {
	t.Run("fine", func(t *testing.T) {})
	t.Run("broken", func(t *testing.T) { t.Error("want 2, got 3") })
}
