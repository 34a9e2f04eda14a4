package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: openapi3gen IN.swagger.json OUT.openapi.json")
		os.Exit(2)
	}
	if err := convert(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "openapi3gen:", err)
		os.Exit(1)
	}
}

// convert reads a Swagger 2.0 document, converts it to OpenAPI 3, checks
// the result and writes it indented (map keys sorted, so the output is
// byte for byte reproducible).
func convert(in, out string) error {
	raw, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	if fixed := int64sAsIntegers(raw); !bytes.Equal(fixed, raw) {
		if err := os.WriteFile(in, fixed, 0o644); err != nil {
			return err
		}
		raw = fixed
	}
	doc, err := render(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return os.WriteFile(out, doc, 0o644)
}

// quotedInt64 is a 64-bit integer's schema as protoc-gen-openapiv2 writes
// it: a string, protojson's form.
var quotedInt64 = regexp.MustCompile(`("type": )"string"(,\s*"format": "u?int64")`)

// int64sAsIntegers documents 64-bit integers as JSON numbers (type
// integer), which is how the gateway writes them (gateway/numbers.go).
func int64sAsIntegers(raw []byte) []byte {
	return quotedInt64.ReplaceAll(raw, []byte(`${1}"integer"${2}`))
}

// render is the OpenAPI 3 document of a Swagger 2.0 one.
func render(raw []byte) ([]byte, error) {
	var v2 openapi2.T
	if err := json.Unmarshal(raw, &v2); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	v3, err := openapi2conv.ToV3(&v2)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	// The gateway serves REST under the same origin as the document.
	v3.Servers = openapi3.Servers{{URL: "/"}}
	if err := describeConfig(v3); err != nil {
		return nil, err
	}
	if err := v3.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the converted document is not valid OpenAPI 3: %w", err)
	}
	doc, err := json.Marshal(v3)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, doc, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}
