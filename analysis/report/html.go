package report

import (
	"html/template"
	"io"
)

// writeHTML renders d as one self-contained HTML page (figures are linked
// files beside it). html/template escapes every value.
func writeHTML(w io.Writer, d document) error {
	return page.Execute(w, d)
}

var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
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
img { max-width: 100%; }
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
{{range .Figures}}<figure><img src="{{.SVG}}" alt="{{.Title}}"><figcaption>{{.Title}} (<a href="{{.PNG}}">PNG</a>)</figcaption></figure>
{{end}}</section>
{{end}}
</body>
</html>
`))
