// Rules in words, and the rule the inbox suggests for "Always allow…":
// Bash → the command's first two words as a prefix (when the command has
// no shell control syntax; else the exact command); Write, Edit and
// MultiEdit → the file's directory as a glob (dir/**); anything else →
// every call of the action.

// What a command an allow rule matches must not hold (the server parses
// the command: rulematch.go): a command holding any of these is never
// matched by a prefix or exact-command rule, so the inbox suggests the
// exact text instead.
const SHELL_CONTROL = [";", "&", "|", "`", "$", ">", "<", "*", "?", "[", "~", "{", "\n", "\r", "\\", "\u0000"];

// shellControl reports whether a shell command holds syntax that the
// shell expands or that chains, pipes or redirects.
export function shellControl(cmd) {
  return SHELL_CONTROL.some((s) => cmd.includes(s));
}

// hasDotDot reports whether a path has a ".." segment ("/" or "\"
// separated); the server never matches such a path by glob.
export function hasDotDot(p) {
  return p.split(/[/\\]/).includes("..");
}

// firstWords returns the command's first two words as they are written,
// or "" when it starts with white space.
export function firstWords(cmd) {
  const m = /^\S+(?:[ \t]+\S+)?/.exec(cmd);
  return m ? m[0] : "";
}

// dirGlob returns "<the directory of path>/**", with the pattern's special
// characters in the directory escaped.
export function dirGlob(path) {
  const i = path.lastIndexOf("/");
  if (i < 0) return "**";
  const dir = path.slice(0, i).replace(/[*?[\]{}\\]/g, "\\$&");
  return `${dir}/**`;
}

const FILE_TOOLS = new Set(["Write", "Edit", "MultiEdit"]);

// suggestMatch returns the match the inbox proposes for an action's rule,
// or null for every call.
export function suggestMatch(name, args) {
  if (name === "Bash" && typeof args.command === "string") return suggestFor("command", args.command, "prefix");
  if (FILE_TOOLS.has(name) && typeof args.file_path === "string") return suggestFor("file_path", args.file_path, "glob");
  return null;
}

// suggestFor returns a match of kind (prefix, glob or equals) on arg,
// whose value is v, falling back to equals where kind could not match v.
export function suggestFor(arg, v, kind) {
  if (kind === "prefix" && typeof v === "string") {
    const p = firstWords(v);
    if (p && !shellControl(v)) return { arg, prefix: p };
  }
  if (kind === "glob" && typeof v === "string" && v !== "" && !hasDotDot(v)) return { arg, glob: dirGlob(v) };
  return { arg, equals: v };
}

// matchKind names a match's predicate: prefix, command, glob, equals, or
// any.
export function matchKind(m) {
  if (!m) return "any";
  if (typeof m.prefix === "string" && m.prefix !== "") return "prefix";
  if (typeof m.command === "string" && m.command !== "") return "command";
  if (typeof m.glob === "string" && m.glob !== "") return "glob";
  return "equals";
}

// matchText says which calls a match lets through ("when command starts
// with “git status”"); a deny rule's command match reads widely ("when
// command may run “git push”").
export function matchText(m, effect = "allow") {
  const kind = matchKind(m);
  if (effect === "deny" && (kind === "prefix" || kind === "command")) return `when ${m.arg} may run “${m.prefix || m.command}” anywhere`;
  switch (kind) {
    case "any": return "for any arguments";
    case "prefix": return `when ${m.arg} starts with “${m.prefix}”`;
    case "command": return `when ${m.arg} is exactly “${m.command}”`;
    case "glob": return `when ${m.arg} matches “${m.glob}”`;
    default: {
      const v = m.equals;
      return typeof v === "string" ? `when ${m.arg} is exactly “${v}”` : `when ${m.arg} equals ${JSON.stringify(v)}`;
    }
  }
}

// KIND_TEXT names the kinds of action in words.
const KIND_TEXT = {
  "shell": "shell command",
  "file.write": "file write",
  "file.edit": "file edit",
  "file.read": "file read",
  "mcp": "MCP tool call",
  "web.fetch": "web fetch",
};

// kindText names a kind of action ("shell command"), or the kind itself.
export function kindText(kind) {
  return KIND_TEXT[kind] || kind;
}

// agentText names a rule's agent ("every agent" for "*").
export function agentText(agent) {
  return agent === "*" ? "every agent" : agent;
}

// ruleText says what a rule does, in one sentence without its end.
export function ruleText(r) {
  const verb = r.effect === "deny" ? "Deny" : "Allow";
  const what = r.kind ? `every ${kindText(r.kind)}` : r.action_name;
  return `${verb} ${what} from ${agentText(r.source_agent)} ${matchText(r.match, r.effect)}`;
}
