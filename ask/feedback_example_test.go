package ask_test

import (
	"context"
	"fmt"

	"github.com/hitl-sh/hitl/ask"
)

// The human_feedback contract's helpers, called as its orchestrator code
// calls them.
func ExampleOrchestrator_RequestHumanFeedback() {
	engine, stop := startExampleEngine(`"Yes, but after 6 pm"`)
	defer stop()
	orchestrator := ask.NewOrchestrator(engine)

	approved, feedback, err := orchestrator.RequestHumanFeedback(context.Background(),
		"approval_123", "Please approve this plan", "Additional context", "session-42", "workflow-7")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("approved:", approved)
	fmt.Println("feedback:", feedback)
	// Output:
	// alice sees free_text: Please approve this plan
	// approved: true
	// feedback: Yes, but after 6 pm
}

func ExampleOrchestrator_RequestYesNoFeedback() {
	engine, stop := startExampleEngine(`"Reject"`) // the label of the no button
	defer stop()
	orchestrator := ask.NewOrchestrator(engine)

	approved, err := orchestrator.RequestYesNoFeedback(context.Background(),
		"yesno_456", "Do you want to proceed?", "Approve", "Reject", "", "session-42", "workflow-7")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("approved:", approved)
	// Output:
	// alice sees approval: Do you want to proceed?
	// approved: false
}

func ExampleOrchestrator_RequestMultipleChoiceFeedback() {
	engine, stop := startExampleEngine(`"staging"`) // a key or a label
	defer stop()
	orchestrator := ask.NewOrchestrator(engine)

	choice, err := orchestrator.RequestMultipleChoiceFeedback(context.Background(),
		"choice_789", "Select deployment environment", []string{"Development", "Staging", "Production"}, "", "session-42", "workflow-7")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("choice:", choice) // the option's text, as the contract returns it
	// Output:
	// alice sees single_choice: Select deployment environment
	// choice: Staging
}

func ExampleReadsAsApproval() {
	for _, text := range []string{"Yes, after 6 pm", "ok", "APPROVED.", "Not yet", "LGTM", ""} {
		fmt.Printf("%q %v\n", text, ask.ReadsAsApproval(text))
	}
	// Output:
	// "Yes, after 6 pm" true
	// "ok" true
	// "APPROVED." true
	// "Not yet" false
	// "LGTM" false
	// "" false
}
