package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
)

// writeHTML renders d as one HTML page. A figure drawn by package plot
// carries its SVG, which is inlined, so the page keeps its figures when it
// is mailed or moved alone; only a figure given as a file name alone (a
// caller that drew none) is linked as an image beside the page.
// html/template escapes every value; the SVG is gonum's, which escapes its
// text itself.
func writeHTML(w io.Writer, d document) error {
	for _, s := range d.Sections {
		for _, f := range s.Figures {
			if len(f.Data) > 0 && !bytes.HasPrefix(f.Data, []byte("<svg")) {
				return fmt.Errorf("html report: figure %q: inline data is not an <svg> element", f.Title)
			}
		}
	}
	return page.Execute(w, d)
}

// inline marks a figure's SVG as markup to be written as it is.
func inline(b []byte) template.HTML { return template.HTML(b) } //nolint:gosec // gonum's SVG, its text escaped

var page = template.Must(template.New("report").Funcs(template.FuncMap{"inline": inline}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; max-width: 80em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; }
td { text-align: right; font-variant-numeric: tabular-nums; }
td:first-child, th:first-child { text-align: left; }
li { margin: 0.2em 0; }
figure { margin: 1em 0; }
figure svg, img { max-width: 100%; height: auto; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{range .Sections}}
<section>
<h2>{{.Title}}</h2>
{{range .Lead}}<p>{{.}}</p>
{{end}}{{with .Table}}<table>
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table>{{end}}
{{range .Paras}}<p>{{.}}</p>
{{end}}{{with .List}}<ul>
{{range .}}<li>{{.}}</li>
{{end}}</ul>{{end}}
{{range .Figures}}<figure>{{if .Data}}{{inline .Data}}{{else}}<img src="{{.SVG}}" alt="{{.Title}}">{{end}}<figcaption>{{.Title}}</figcaption></figure>
{{end}}</section>
{{end}}
</body>
</html>
`))
