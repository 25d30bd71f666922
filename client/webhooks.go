package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/standardwebhooks"
)

// webhooksPath is the webhooks API's collection.
const webhooksPath = "/api/v1/webhooks"

// webhookPath returns the path of one subscription.
func webhookPath(id string) (string, error) {
	if id == "" {
		return "", hitl.Errorf(hitl.EINVALID, "webhook id is required")
	}
	return webhooksPath + "/" + url.PathEscape(id), nil
}

// AddWebhook subscribes a URL to events (POST /api/v1/webhooks); only
// admins may. The subscription comes back with its secret, which is never
// shown again.
func (c *Client) AddWebhook(ctx context.Context, req hitl.WebhookRequest) (*hitl.WebhookSubscription, error) {
	var w hitl.WebhookSubscription
	if _, err := c.do(ctx, http.MethodPost, webhooksPath, req, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// Webhooks lists the subscriptions, oldest first, without their secrets
// (GET /api/v1/webhooks).
func (c *Client) Webhooks(ctx context.Context) ([]*hitl.WebhookSubscription, error) {
	var resp struct {
		Webhooks []*hitl.WebhookSubscription `json:"webhooks"`
	}
	if _, err := c.do(ctx, http.MethodGet, webhooksPath, nil, &resp); err != nil {
		return nil, err
	}
	return resp.Webhooks, nil
}

// DeleteWebhook deletes a subscription and its deliveries (DELETE
// /api/v1/webhooks/{id}).
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	p, err := webhookPath(id)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, http.MethodDelete, p, nil, nil)
	return err
}

// WebhookSecret returns the server's secret, which signs the deliveries
// to callback_url (GET /api/v1/webhooks/secret); only admins may.
func (c *Client) WebhookSecret(ctx context.Context) (string, error) {
	var resp struct {
		Secret string `json:"secret"`
	}
	if _, err := c.do(ctx, http.MethodGet, webhooksPath+"/secret", nil, &resp); err != nil {
		return "", err
	}
	return resp.Secret, nil
}

// Deliveries lists webhook deliveries with their attempts, newest first:
// those of f.InteractionID (GET /api/v1/interactions/{id}/deliveries) or
// of f.SubscriptionID (GET /api/v1/webhooks/{id}/deliveries).
func (c *Client) Deliveries(ctx context.Context, f hitl.DeliveryFilter) ([]*hitl.WebhookDelivery, error) {
	var p string
	switch {
	case f.SubscriptionID != "":
		wp, err := webhookPath(f.SubscriptionID)
		if err != nil {
			return nil, err
		}
		p = wp + "/deliveries"
	case f.InteractionID != "":
		p = "/api/v1/interactions/" + url.PathEscape(f.InteractionID) + "/deliveries"
	default:
		return nil, hitl.Errorf(hitl.EINVALID, "an interaction or webhook id is required")
	}
	if f.Limit != 0 {
		p += "?limit=" + strconv.Itoa(f.Limit)
	}
	var resp struct {
		Deliveries []*hitl.WebhookDelivery `json:"deliveries"`
	}
	if _, err := c.do(ctx, http.MethodGet, p, nil, &resp); err != nil {
		return nil, err
	}
	return resp.Deliveries, nil
}

// VerifyWebhook checks a delivery hitl sent (to a callback_url, or to a
// subscription): its Standard Webhooks signature under secret (whsec_…,
// from `hitl webhook secret` or the subscription) and its timestamp
// (within five minutes). Give it the exact bytes received, before
// parsing them. See the standardwebhooks package for more control.
func VerifyWebhook(secret string, header http.Header, body []byte) error {
	return standardwebhooks.Verify(secret, header, body)
}
