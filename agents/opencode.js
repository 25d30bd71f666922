// hitl's OpenCode plugin, printed by `hitl hook opencode --print-plugin`.
// Before OpenCode runs a tool the pattern below names, the plugin hands the
// call to `hitl hook opencode` on its standard input, and the call runs only
// when a person, or a rule, allows it in hitl; an edit runs the edited
// arguments. Everything else (hitl down, a refused token, nobody answering,
// hitl crashing or missing, an answer it cannot read) throws, and OpenCode
// does not run the call: the model reads the reason. No dependencies.
import { spawn } from "node:child_process";

const HITL = {{HITL}};
const ARGS = {{ARGS}};
const TOOLS = new RegExp({{TOOLS}});
// The question's timeout and a minute: hitl answers before this.
const WAIT_MS = {{WAIT_MS}};

function ask(call) {
  return new Promise((resolve, reject) => {
    const child = spawn(HITL, ARGS, { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`hitl hook opencode gave no answer in ${WAIT_MS / 1000} s`));
    }, WAIT_MS);
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${HITL}: ${e.message}`));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      let decision;
      try {
        decision = JSON.parse(out);
      } catch {
        reject(new Error(err.trim() || `hitl hook opencode exited ${code} without a decision`));
        return;
      }
      resolve({ decision, code });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(call));
  });
}

export const Hitl = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    if (!TOOLS.test(input.tool)) return;
    const args = output.args ?? {};
    let answer;
    try {
      answer = await ask({ tool: input.tool, sessionID: input.sessionID, callID: input.callID, cwd: directory, args });
    } catch (e) {
      throw new Error(`hitl could not get a decision on this ${input.tool} call, so it is denied: ${e.message}`);
    }
    const { decision, code } = answer;
    if (code === 0 && decision && decision.decision === "allow") {
      const edited = decision.args;
      if (edited && typeof edited === "object" && !Array.isArray(edited)) {
        // OpenCode runs output.args as changed in place, not a new object.
        for (const k of Object.keys(args)) delete args[k];
        Object.assign(args, edited);
      }
      return;
    }
    throw new Error((decision && typeof decision.reason === "string" && decision.reason) || "Denied in hitl.");
  },
});
