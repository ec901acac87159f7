// Package docs makes heatsink's reference documents available to the code
// that must agree with them: the data model is the contract between sources,
// sinks, alert rules and analysis, so rules are checked against the document
// itself rather than a copy that could drift from it.
package docs

import _ "embed"

// DataModel is data-model.md: every measurement, with its tags and fields.
//
//go:embed data-model.md
var DataModel string
