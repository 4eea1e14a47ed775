package benchkit

import (
	"strconv"
	"strings"
	"time"
)

// AlignRows lays rows out in columns two spaces apart, for a fixed-width
// font: the first left columns left-aligned (names), the rest
// right-aligned (numbers), and gap more spaces between the last name and
// the first number. The first row is the header; every row has as many
// cells as it.
func AlignRows(rows [][]string, left, gap int) string {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len(cell))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-len(cell))
			if i > 0 {
				b.WriteString("  ")
			}
			if i > 0 && i == left {
				b.WriteString(strings.Repeat(" ", gap))
			}
			if i < left {
				b.WriteString(cell + pad)
			} else {
				b.WriteString(pad + cell)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Millis formats d in milliseconds with microsecond precision, the unit of
// the reports' latency columns.
func Millis(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
}
