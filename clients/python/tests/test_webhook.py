"""verify_webhook, against the Standard Webhooks reference example."""

import pytest

import hitl

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
STAMP = 1614265330
BODY = b'{"test": 2432232314}'
SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def headers(sig: str = SIGNATURE, msg_id: str = MSG_ID, stamp: str = str(STAMP)) -> dict[str, str]:
    return {"Webhook-Id": msg_id, "Webhook-Timestamp": stamp, "Webhook-Signature": sig}


def test_valid() -> None:
    hitl.verify_webhook(SECRET, headers(), BODY, now=STAMP + 10)
    hitl.verify_webhook(SECRET, headers("v2,abc " + SIGNATURE), BODY.decode(), now=STAMP)


@pytest.mark.parametrize(
    "hdrs, body, now",
    [
        (headers(), b'{"test": 2432232315}', STAMP),
        (headers(msg_id="msg_other"), BODY, STAMP),
        (headers(sig=SIGNATURE.replace("v1,", "v2,")), BODY, STAMP),
        (headers(sig=""), BODY, STAMP),
        (headers(stamp="soon"), BODY, STAMP),
        (headers(), BODY, STAMP + 6 * 60),
    ],
)
def test_refused(hdrs: dict[str, str], body: bytes, now: int) -> None:
    with pytest.raises(hitl.WebhookVerificationError):
        hitl.verify_webhook(SECRET, hdrs, body, now=now)


def test_bad_secret() -> None:
    with pytest.raises(hitl.WebhookVerificationError):
        hitl.verify_webhook("whsec_not base64!", headers(), BODY, now=STAMP)
