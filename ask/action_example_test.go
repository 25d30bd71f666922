package ask_test

import (
	"context"
	"fmt"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
)

func ExampleAction() {
	// The person edits the command before approving it.
	engine, stop := startExampleEngine(`{"decision": "edit", "args": {"command": "terraform plan"}}`)
	defer stop()

	d, err := ask.Action(context.Background(), engine, "Bash", map[string]string{"command": "terraform apply -auto-approve"},
		&ask.ActionOptions{Description: "Apply the infrastructure plan", Options: ask.Options{SourceAgent: "infra-bot"}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	if !d.Run() {
		fmt.Println("not running it:", d.Kind, d.Message)
		return
	}
	fmt.Println(d.Kind, string(d.Args))
	// Output:
	// alice sees action: Run Bash?
	// edit {"command":"terraform plan"}
}

func ExampleAction_reject() {
	engine, stop := startExampleEngine(`{"decision": "reject", "message": "Not on a Friday."}`)
	defer stop()

	d, err := ask.Action(context.Background(), engine, "Bash", map[string]string{"command": "./deploy.sh prod"},
		&ask.ActionOptions{RejectRequiresMessage: true, Decisions: []hitl.Decision{hitl.DecisionApprove, hitl.DecisionReject}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	// A rejection is a decision, not an error: hand the reason to the model.
	fmt.Println(d.Run(), d.Kind+":", d.Message)
	// Output:
	// alice sees action: Run Bash?
	// false reject: Not on a Friday.
}

func ExampleActionOf() {
	engine, stop := startExampleEngine(`{"decision": "edit", "args": {"to": "ops@example.com", "subject": "Outage report", "body": "Resolved at 14:05."}}`)
	defer stop()

	// The arguments are a struct: its JSON Schema is what an edit must
	// meet, and the edited arguments come back as one.
	type Email struct {
		To      string `json:"to" jsonschema:"the recipient"`
		Subject string `json:"subject"`
		Body    string `json:"body"`
	}
	d, err := ask.ActionOf(context.Background(), engine, "send_email",
		Email{To: "all@example.com", Subject: "Outage report", Body: "Resolved at 14:05."},
		&ask.ActionOptions{Question: "Send the outage report?"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("%s %+v\n", d.Kind, d.Args)
	// Output:
	// alice sees action: Send the outage report?
	// edit {To:ops@example.com Subject:Outage report Body:Resolved at 14:05.}
}
