package listwatchtest

import "testing"

func TestCutNeedsALongerLength(t *testing.T) {
	if _, err := parse([]byte(`{"cmd":"cut","status":200,"body":"abc","length":3}`)); err == nil {
		t.Fatal("a cut whose length does not exceed its body was accepted")
	}
}
