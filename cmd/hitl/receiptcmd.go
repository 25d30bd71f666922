package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/receipt"
)

// exitInvalidReceipt is hitl receipt verify's exit code for a receipt
// that does not hold.
const exitInvalidReceipt = 1

// maxJWKSBytes bounds a JWKS document read by hitl receipt verify.
const maxJWKSBytes = 1 << 20

// runReceipt checks and manages approved actions' receipts: hitl receipt
// verify, rotate-key.
func runReceipt(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runSubcommand(ctx, "receipt", "Checks and manages the signed receipts hitl issues for approved actions\n"+
		"(result.receipt): a receipt binds the interaction, the agent, the tool and\n"+
		"the SHA-256 of the approved arguments, and expires. See docs/receipts.md.",
		[]subcommand{
			{"verify", "check a receipt against the server's published keys", runReceiptVerify},
			{"rotate-key", "sign receipts with a new key (admins)", runReceiptRotate},
		}, args, os.Stdin, stdout, stderr)
}

// runReceiptVerify checks a receipt (an argument, or - for standard
// input) offline against a JWKS: the server's, or --jwks.
func runReceiptVerify(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("receipt verify", "hitl receipt verify [flags] RECEIPT|-",
		"Checks a receipt's signature against the published keys, its expiry, and\n"+
			"that it stands for the call the flags describe. Prints its claims as JSON\n"+
			"and exits 0 when it holds; else prints why and exits 1.", stderr)
	base := serverFlag(fs)
	jwks := fs.String("jwks", "", "read the public keys from this JWKS `URL or file` instead of\nthe server's /.well-known/jwks.json")
	argsJSON := fs.String("args", "", "the `JSON` arguments about to be run: the receipt must be for them")
	id := fs.String("interaction", "", "the interaction `id` the receipt must be for")
	name := fs.String("name", "", "the tool `name` the receipt must be for")
	kind := fs.String("kind", "", "the action `kind` the receipt must be for")
	if code, ok := parse(fs, args, exitError); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "hitl receipt verify: give one receipt, or - to read it from standard input")
		return exitError
	}
	token := fs.Arg(0)
	if token == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, 64<<10))
		if err != nil {
			fmt.Fprintf(stderr, "hitl receipt verify: %v\n", err)
			return exitError
		}
		token = string(b)
	}
	expect := hitl.ReceiptExpectation{InteractionID: *id, Name: *name, Kind: *kind}
	if *argsJSON != "" {
		if !json.Valid([]byte(*argsJSON)) {
			fmt.Fprintln(stderr, "hitl receipt verify: --args is not valid JSON")
			return exitError
		}
		expect.Args = json.RawMessage(*argsJSON)
	}
	set, err := loadKeySet(ctx, *jwks, *base)
	if err != nil {
		fmt.Fprintf(stderr, "hitl receipt verify: %s\n", errText(err))
		return exitError
	}
	c, err := receipt.Verify(strings.TrimSpace(token), set, expect, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "invalid receipt: %s\n", errText(err))
		return exitInvalidReceipt
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return exitError
	}
	return 0
}

// loadKeySet reads the JWKS at src (a URL or a file), or else the
// server's at base.
func loadKeySet(ctx context.Context, src, base string) (jose.JSONWebKeySet, error) {
	if src == "" {
		return newClient(base).KeySet(ctx)
	}
	var b []byte
	if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
		if err != nil {
			return jose.JSONWebKeySet{}, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return jose.JSONWebKeySet{}, fmt.Errorf("read JWKS: %w", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return jose.JSONWebKeySet{}, fmt.Errorf("read JWKS: %s answered %s", src, resp.Status)
		}
		if b, err = io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes)); err != nil {
			return jose.JSONWebKeySet{}, fmt.Errorf("read JWKS: %w", err)
		}
	} else {
		var err error
		if b, err = os.ReadFile(src); err != nil {
			return jose.JSONWebKeySet{}, fmt.Errorf("read JWKS: %w", err)
		}
	}
	return receipt.ParseKeySet(b)
}

// runReceiptRotate makes the server sign receipts with a new key.
func runReceiptRotate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("receipt rotate-key", "hitl receipt rotate-key [flags]",
		"Makes the server sign receipts with a new key, on every replica within a\n"+
			"minute. The old key signs nothing more but stays published until every\n"+
			"receipt it signed has expired, so no unexpired receipt stops verifying.", stderr)
	base := serverFlag(fs)
	if code, ok := parse(fs, args, exitError); !ok {
		return code
	}
	kid, err := newClient(*base).RotateReceiptKey(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "hitl receipt rotate-key: %s\n", errText(err))
		return exitError
	}
	fmt.Fprintln(stdout, kid)
	return 0
}
