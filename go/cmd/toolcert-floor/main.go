// Command toolcert-floor is the cost floor of a Go accumulator, for `toolcert bench`: the
// module's reference (toolcert.NewCore: each call's fragments appended to a strings.Builder,
// one strict parse at the end; the wire and bytes levels through the module's SSE and dialect
// decoders), served over the protocol at every level, dialect and server profile (its decoders
// read every profile). From a module that requires github.com/toolcert/toolcert/go (your
// adapter's):
//
//	go run github.com/toolcert/toolcert/go/cmd/toolcert-floor
//
// or build it once (`go build -o toolcert-floor github.com/toolcert/toolcert/go/cmd/toolcert-floor`)
// and give the binary. `toolcert bench --subject exec:'...' --floor exec:'...'` runs it beside
// your adapter and prices your accumulator as a multiple of it.
package main

import toolcert "github.com/toolcert/toolcert/go"

// floor is the floor's server: the reference at every level, every quirk declared.
func floor() toolcert.Server {
	return toolcert.ReferenceServer(toolcert.Implementation{Name: "toolcert-adapter-floor", Quirks: toolcert.Quirks}, toolcert.NewCore)
}

func main() { toolcert.Main(floor()) }
