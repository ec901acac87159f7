package tune

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// curveColours are the methods' line colours, in report order.
var curveColours = []string{"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e"}

// HTML is the report as one page: the best-so-far curves as an inline SVG
// figure, then the Markdown report's tables as preformatted text.
func (r *Report) HTML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><meta charset=utf-8><title>heatsink tune: %s</title>\n", html.EscapeString(r.Space))
	fmt.Fprintf(&b, "<h1>heatsink tune: %s</h1>\n%s\n<pre>%s</pre>\n", html.EscapeString(r.Space), r.svg(), html.EscapeString(r.Markdown()))
	return b.String()
}

// svg plots best-so-far against evaluations, one line per method.
func (r *Report) svg() string {
	const w, h, pad = 640.0, 320.0, 50.0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range r.Curves {
		for _, e := range c.Evaluations {
			if e.BestSoFar != nil {
				lo, hi = math.Min(lo, *e.BestSoFar), math.Max(hi, *e.BestSoFar)
			}
		}
	}
	if math.IsInf(lo, 0) || r.BudgetUsed == 0 {
		return "<p>no evaluation succeeded: nothing to plot</p>"
	}
	if hi == lo {
		hi = lo + 1
	}
	x := func(n int) float64 { return pad + (w-2*pad)*float64(n-1)/math.Max(1, float64(r.BudgetUsed-1)) }
	y := func(v float64) float64 { return h - pad - (h-2*pad)*(v-lo)/(hi-lo) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" font-family="sans-serif" font-size="12">`, w, h)
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="black"/><line x1="%g" y1="%g" x2="%g" y2="%g" stroke="black"/>`,
		pad, h-pad, w-pad, h-pad, pad, pad, pad, h-pad)
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">evaluation</text><text x="4" y="%g">%.4g</text><text x="4" y="%g">%.4g</text>`,
		w/2, h-12, y(hi)+4, hi, y(lo)+4, lo)
	for i, c := range r.Curves {
		var pts []string
		for _, e := range c.Evaluations {
			if e.BestSoFar != nil {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(e.N), y(*e.BestSoFar)))
			}
		}
		col := curveColours[i%len(curveColours)]
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, col, strings.Join(pts, " "))
		fmt.Fprintf(&b, `<text x="%g" y="%g" fill="%s">%s</text>`, w-pad+4, pad+14*float64(i), col, html.EscapeString(c.Method))
	}
	b.WriteString("</svg>")
	return b.String()
}
