package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/standardwebhooks"
	"github.com/hitl-sh/hitl/webhook"
)

// webhookConfig is what hitl serve's flags say about webhooks.
type webhookConfig struct {
	secret       string
	allowPrivate *envBool
}

// webhookFlags adds hitl serve's webhook flags to fs.
func webhookFlags(fs *flag.FlagSet) *webhookConfig {
	c := &webhookConfig{}
	// The secret is read from the environment after parsing, not given as
	// a flag default, which --help would print.
	fs.StringVar(&c.secret, "webhook-secret", "", "the `secret` (whsec_…) that signs deliveries to callback_url; default: made\non first start and stored encrypted (HITL_WEBHOOK_SECRET)")
	c.allowPrivate = envBoolVar(fs, "webhook-allow-private", "HITL_WEBHOOK_ALLOW_PRIVATE", "let webhooks and Web Push reach loopback, private and link-local addresses")
	return c
}

// check validates the flags.
func (c *webhookConfig) check() error {
	if c.secret == "" {
		c.secret = os.Getenv("HITL_WEBHOOK_SECRET")
	}
	if c.secret != "" {
		if _, err := standardwebhooks.DecodeSecret(c.secret); err != nil {
			return fmt.Errorf("--webhook-secret: %w", err)
		}
	}
	return nil
}

// start starts the webhooks over b's store, sealing stored secrets with
// the same key as Slack's (see slackConfig.cipher).
func (c *webhookConfig) start(ctx context.Context, log *slog.Logger, store hitl.Store, b *broker.Broker, sl *slackConfig, db string) (*webhook.Service, error) {
	ws, ok := store.(webhook.Store)
	if !ok {
		return nil, fmt.Errorf("the store cannot keep webhooks")
	}
	opts := &webhook.Options{Logger: log, ServerSecret: c.secret, UserAgent: "hitl-webhooks/" + buildVersion()}
	opts.AllowPrivate = c.allowPrivate.on()
	// Without a key the webhook service says what that means itself.
	cipher, err := sl.cipher(log, db, "")
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	if cipher != nil {
		opts.Sealer = cipher
	}
	svc := webhook.New(ws, b, opts)
	if err := svc.Start(ctx); err != nil {
		return nil, err
	}
	return svc, nil
}

// runWebhook manages webhooks: hitl webhook add, ls, rm, secret.
func runWebhook(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runSubcommand(ctx, "webhook", "Manages webhooks (admins): subscriptions that are sent interaction events\n"+
		"(interaction.created, .answered, .expired, .cancelled), signed per Standard\n"+
		"Webhooks with their own secret, and the server's secret, which signs what is\n"+
		"sent to an interaction's callback_url. They work through a running server\n"+
		"(--server or HITL_URL, HITL_TOKEN).",
		[]subcommand{
			{"add", "subscribe a URL to events; prints its secret, once", runWebhookAdd},
			{"ls", "list the subscriptions", runWebhookList},
			{"rm", "delete a subscription (and its deliveries)", runWebhookRemove},
			{"secret", "print the server's webhook secret", runWebhookSecret},
		}, args, os.Stdin, stdout, stderr)
}

// runWebhookAdd subscribes a URL and prints its ID and secret.
func runWebhookAdd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("webhook add", "hitl webhook add [--events E,E] [--description TEXT] URL",
		"Subscribes URL to interaction events and prints the subscription's ID and\n"+
			"its secret (whsec_…), which signs every delivery: keep it, it is not shown\n"+
			"again.", stderr)
	events := fs.String("events", "interaction.answered,interaction.expired,interaction.cancelled",
		"comma-separated `events`: interaction.created, interaction.answered,\ninteraction.expired, interaction.cancelled, interaction.reminded,\ninteraction.escalated, or all")
	desc := fs.String("description", "", "what the subscription is for")
	asJSON := fs.Bool("json", false, "print the subscription as JSON")
	base := serverFlag(fs)
	if code, ok := parse(fs, args, exitError); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "hitl webhook add: give one URL")
		return exitError
	}
	req := hitl.WebhookRequest{URL: fs.Arg(0), Description: *desc}
	for e := range strings.SplitSeq(*events, ",") {
		switch e = strings.TrimSpace(e); e {
		case "":
		case "all":
			req.Events = append(req.Events, hitl.WebhookEvents...)
		default:
			req.Events = append(req.Events, hitl.WebhookEvent(e))
		}
	}
	w, err := newClient(*base).AddWebhook(ctx, req)
	if err != nil {
		fmt.Fprintf(stderr, "hitl webhook add: %s\n", errText(err))
		return exitError
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(w); err != nil {
			fmt.Fprintf(stderr, "hitl webhook add: %v\n", err)
			return exitError
		}
		return 0
	}
	fmt.Fprintf(stdout, "%s\nsecret: %s\n", w.ID, w.Secret)
	return 0
}

// runWebhookList lists the subscriptions as a table or JSON.
func runWebhookList(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("webhook ls", "hitl webhook ls [flags]", "Lists the webhook subscriptions, oldest first.", stderr)
	asJSON := fs.Bool("json", false, "print the subscriptions as a JSON array")
	base := serverFlag(fs)
	if code, ok := parse(fs, args, exitError); !ok {
		return code
	}
	list, err := newClient(*base).Webhooks(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "hitl webhook ls: %s\n", errText(err))
		return exitError
	}
	if *asJSON {
		if err := printJSONList(stdout, list); err != nil {
			fmt.Fprintf(stderr, "hitl webhook ls: %v\n", err)
			return exitError
		}
		return 0
	}
	if len(list) == 0 {
		fmt.Fprintln(stderr, "no webhooks")
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tURL\tEVENTS\tBY\tDESCRIPTION")
	for _, w := range list {
		events := make([]string, len(w.Events))
		for i, e := range w.Events {
			events[i] = strings.TrimPrefix(string(e), "interaction.")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", w.ID, truncate(w.URL, 60), strings.Join(events, ","), w.CreatedBy, truncate(w.Description, 40))
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "hitl webhook ls: %v\n", err)
		return exitError
	}
	return 0
}

// runWebhookRemove deletes subscriptions.
func runWebhookRemove(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) int {
	fs := newFlagSet("webhook rm", "hitl webhook rm ID…", "Deletes webhook subscriptions, with their deliveries (sent or not).", stderr)
	base := serverFlag(fs)
	if code, ok := parse(fs, args, exitError); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "hitl webhook rm: give one or more IDs")
		return exitError
	}
	c := newClient(*base)
	code := 0
	for _, id := range fs.Args() {
		if err := c.DeleteWebhook(ctx, id); err != nil {
			fmt.Fprintf(stderr, "hitl webhook rm %s: %s\n", id, errText(err))
			code = exitError
		}
	}
	return code
}

// runWebhookSecret prints the server's webhook secret.
func runWebhookSecret(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("webhook secret", "hitl webhook secret", "Prints the server's webhook secret (whsec_…), which signs what hitl sends to\n"+
		"callback_url: give it to the agents that verify those deliveries.", stderr)
	base := serverFlag(fs)
	if code, ok := parse(fs, args, exitError); !ok {
		return code
	}
	secret, err := newClient(*base).WebhookSecret(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "hitl webhook secret: %s\n", errText(err))
		return exitError
	}
	fmt.Fprintln(stdout, secret)
	return 0
}
