package report

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// report.html stands alone: a figure drawn by package plot is inlined as
// its <svg> element, never an <img> pointing at a file beside the page.
func TestHTMLInlinesFiguresAsSVG(t *testing.T) {
	svg := `<svg width="10pt" height="10pt" viewBox="0 0 10 10" xmlns="http://www.w3.org/2000/svg"><text>gpu_core:0 &lt;b&gt;</text></svg>`
	figs := []Figure{
		{Title: "Temperatures", Data: []byte(svg)},
		{Title: "Host <b>", SVG: "host.svg", PNG: "host.png", Data: []byte(svg)},
	}
	var buf bytes.Buffer
	if err := Write(&buf, HTML, sample(), figs); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			count[n.Data]++
			for _, a := range n.Attr {
				if a.Key == "src" || a.Key == "href" {
					t.Errorf("<%s %s=%q>: the page refers to a file", n.Data, a.Key, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if count["svg"] != 2 || count["img"] != 0 || count["figure"] != 2 {
		t.Errorf("%d svg, %d img, %d figure elements; want 2, 0, 2", count["svg"], count["img"], count["figure"])
	}
	if strings.Contains(buf.String(), "Host <b>") {
		t.Error("a figure title reached the page as markup")
	}
}

// Inline data that is not an <svg> element is refused, naming the figure.
func TestHTMLRefusesFigureDataThatIsNotSVG(t *testing.T) {
	var buf bytes.Buffer
	err := Write(&buf, HTML, sample(), []Figure{{Title: "Temperatures", Data: []byte("<script>alert(1)</script>")}})
	if err == nil || !strings.Contains(err.Error(), `"Temperatures"`) {
		t.Errorf("err = %v, want a refusal naming the figure", err)
	}
}
