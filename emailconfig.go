package hitl

// EmailConfigView is the email channel's configuration as GET
// /api/v1/email/config shows it: the SMTP URL's password masked.
type EmailConfigView struct {
	Enabled           bool     `json:"enabled"`
	SMTPURL           string   `json:"smtp_url"`
	From              string   `json:"from"`
	DelaySeconds      int      `json:"delay_seconds"`
	DefaultRecipients []string `json:"default_recipients"`
	// FromEnvironment names the fields set by flags or environment
	// variables, which win over what is saved.
	FromEnvironment []string `json:"from_environment"`
}

// EmailConfigUpdate is the body of POST /api/v1/email/config. A field
// left out keeps its value; an SMTP URL sent back with its password masked
// as GET showed it keeps the stored password; "" clears a string.
type EmailConfigUpdate struct {
	Enabled           *bool     `json:"enabled"`
	SMTPURL           *string   `json:"smtp_url"`
	From              *string   `json:"from"`
	DelaySeconds      *int      `json:"delay_seconds"`
	DefaultRecipients *[]string `json:"default_recipients"`
}

// EmailTestResult is the answer of POST /api/v1/email/test.
type EmailTestResult struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}
