// Package docs makes heatsink's reference documents available to the code
// that must agree with them: the data model is the contract between sources,
// sinks, alert rules and analysis, and point/schema's tests check its Go
// constants against the document itself.
package docs

import _ "embed"

// DataModel is data-model.md: every measurement, with its tags and fields.
//
//go:embed data-model.md
var DataModel string
