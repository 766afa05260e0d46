module github.com/webcodex/webcodex

go 1.26.8

require (
	github.com/chromedp/cdproto v0.159.3
	github.com/creack/pty v1.1.24
	github.com/godbus/dbus/v5 v5.2.4
	github.com/google/jsonschema-go v0.4.3
	github.com/gorilla/websocket v1.5.3
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/nlnwa/whatwg-url v0.6.2
	github.com/qmuntal/stateless v1.7.2
	github.com/spf13/cobra v1.10.2
	golang.org/x/net v0.34.0
	golang.org/x/sys v0.41.0
	pgregory.net/rapid v1.3.0
)

require (
	github.com/bits-and-blooms/bitset v1.20.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/text v0.21.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)
