package localapi

// The verbs Playwright MCP has that the rest of the local API did not:
// their wire types and routes (the Runner serves them; see routes.go).

var (
	PDF = readRoute[PageRequest, PDFResult]("pdf")
)

// PDFResult is a page printed as PDF (an owned, headless browser's page
// that holds no frame of a denied origin).
type PDFResult struct {
	Page string `json:"page"`
	PDF  []byte `json:"pdf"`
}
