// Package agenttest holds what the harnesses for the real agent CLIs
// (claudetest, codextest, geminitest, copilottest, opencodetest) share, for
// tests only: a scripted hook program that records its input, a small MCP
// server, running a CLI in a process group of its own, and writing the
// files a run needs. What differs between agents (the settings' shape, a
// timeout's unit, how the CLI is started) stays in each harness.
package agenttest
