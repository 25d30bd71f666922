package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/receipt"
	"github.com/hitl-sh/hitl/secret"
)

// maxReceiptTTL bounds --receipt-ttl: a receipt is a short-lived proof.
const maxReceiptTTL = 7 * 24 * time.Hour

// parseReceiptTTL reads --receipt-ttl: a duration between 1s and a week.
func parseReceiptTTL(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < time.Second || d > maxReceiptTTL {
		return 0, fmt.Errorf("--receipt-ttl must be a duration between 1s and %s, such as 1h; got %q", maxReceiptTTL, s)
	}
	return d, nil
}

// startReceipts starts the service that signs approved actions'
// receipts, its keys kept in store sealed with the server's secret key
// (see slackConfig.secretKey); their issuer is the public URL, else the
// address hitl listens on.
func startReceipts(ctx context.Context, log *slog.Logger, store hitl.Store, sl *slackConfig, db string, ttl time.Duration, addr net.Addr) (*receipt.Service, error) {
	ns, ok := store.(hitl.NotificationStore)
	if !ok {
		return nil, fmt.Errorf("the store cannot keep the receipt keys")
	}
	key, err := sl.secretKey(log, db, "")
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	var cipher *secret.Cipher
	if key != nil {
		if cipher, err = secret.NewCipher(key, hitl.ChannelReceipt); err != nil {
			return nil, err
		}
	}
	issuer := sl.publicURL()
	if issuer == "" {
		issuer = listenURL(addr)
	}
	svc := receipt.New(ns, &receipt.Options{Cipher: cipher, Issuer: strings.TrimSuffix(issuer, "/"), TTL: ttl, Logger: log})
	if err := svc.Start(ctx); err != nil {
		return nil, fmt.Errorf("receipt keys: %w", err)
	}
	return svc, nil
}
