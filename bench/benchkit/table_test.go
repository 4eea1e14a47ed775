package benchkit

import (
	"testing"
	"time"
)

func TestAlignRows(t *testing.T) {
	rows := [][]string{{"test", "way", "MB/s", "ratio"}, {"read", "warm", "1234", "0.98 of raw"}, {"random read", "raw", "7", "-"}}
	for _, tc := range []struct {
		left, gap int
		want      string
	}{
		// metabench: one name column, numbers two spaces on.
		{1, 0, "" +
			"test          way  MB/s        ratio\n" +
			"read         warm  1234  0.98 of raw\n" +
			"random read   raw     7            -\n"},
		// databench: names set off from the numbers by two more spaces.
		{2, 2, "" +
			"test         way     MB/s        ratio\n" +
			"read         warm    1234  0.98 of raw\n" +
			"random read  raw        7            -\n"},
	} {
		if got := AlignRows(rows, tc.left, tc.gap); got != tc.want {
			t.Errorf("AlignRows(left %d, gap %d):\n%s\nwant:\n%s", tc.left, tc.gap, got, tc.want)
		}
	}
}

func TestMillis(t *testing.T) {
	if got := Millis(123456789 * time.Nanosecond); got != "123.457" {
		t.Errorf("Millis = %q", got)
	}
}
