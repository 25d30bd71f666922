package shell

import (
	"errors"
	"path"
	"strings"
)

// Match is how a command line stands to a deny rule's pattern.
type Match int

// How a command line stands to a pattern, from the least to the most.
const (
	// No: nothing the line runs is the pattern's command.
	No Match = iota
	// Maybe: the line may run it, and only running it would tell (a
	// program or argument the shell computes, a script the line hands to
	// a shell, the program's name as an argument of another): a person
	// decides, never an allow rule.
	Maybe
	// Yes: the line runs it, somewhere.
	Yes
)

// String returns "no", "maybe" or "yes".
func (m Match) String() string {
	switch m {
	case Yes:
		return "yes"
	case Maybe:
		return "maybe"
	}
	return "no"
}

// Pattern is a command as a rule states it: a program and the words that
// follow it, such as "git push" or "rm -rf".
type Pattern struct {
	words []string // as written
	// For deny matching: the program's name folded, the pattern's
	// operands and its options (words starting with "-"), folded.
	program  string
	operands []string
	options  []string
	// seen, when not nil, records every program name compared with
	// program (see Line.index).
	seen map[string]bool
}

// ParsePattern reads a rule's command: one simple command of static words
// (quotes are removed as the shell would), nothing else.
func ParsePattern(s string) (Pattern, error) {
	l, err := Parse(s)
	if err != nil {
		return Pattern{}, err
	}
	if !l.Plain {
		return Pattern{}, errors.New("a command pattern must be one plain command: no ; & | ` $( > < or line breaks, no variables, patterns or assignments")
	}
	p := Pattern{program: programName(l.Commands[0][0].Text)}
	for i, w := range l.Commands[0] {
		p.words = append(p.words, w.Text)
		switch {
		case i == 0:
		case isOption(w.Text):
			p.options = append(p.options, strings.ToLower(w.Text))
		default:
			p.operands = append(p.operands, strings.ToLower(w.Text))
		}
	}
	return p, nil
}

// Program returns the pattern's program name as MayRunLine compares it:
// its last path element, folded (see Line.Programs).
func (p Pattern) Program() string { return p.program }

// Words returns the pattern's words, as the shell would pass them.
func (p Pattern) Words() []string { return append([]string(nil), p.words...) }

// Allows reports whether line is the pattern's command exactly (exact)
// or followed by further arguments, for an allow rule: the line must be
// one plain command (see Line.Plain) whose first words are the
// pattern's, compared exactly. "git status" allows "git  status -s" and
// "git 'status'", never "git status; rm -rf ~", "git status $(x)",
// "git status > f", "FOO=1 git status" or "/usr/bin/git status".
func (p Pattern) Allows(line *Line, exact bool) bool {
	if line == nil || !line.Plain || len(p.words) == 0 {
		return false
	}
	w := line.Commands[0]
	if len(w) < len(p.words) || exact && len(w) != len(p.words) {
		return false
	}
	for i, want := range p.words {
		if w[i].Text != want {
			return false
		}
	}
	return true
}

// MayRun says whether src may run the pattern's command, for a deny rule:
// the safe reading of a deny rule is the widest. Every simple command of
// the line is checked (after ; && || | & and in substitutions, subshells,
// functions and the scripts given to sh -c or eval); the program is
// compared by its name, whatever its directory, and without regard to
// case; wrappers such as env, sudo, command, exec, nohup, nice, timeout
// and xargs are looked through; the pattern's operands must follow in
// order with options (and their values) between them allowed ("git -C .
// push" runs "git push"), and its options may come anywhere after the
// program, short ones in any grouping ("rm -fr" runs "rm -rf"). Anything
// that cannot be known before the line runs is Maybe; a line that cannot
// be parsed is Maybe.
func (p Pattern) MayRun(src string) Match {
	return p.source(src, 0)
}

// MayRunArgv is MayRun for a command given as the program's argument
// vector (as some agents send it: ["bash", "-lc", "git push"]).
func (p Pattern) MayRunArgv(argv []string) Match {
	words := make([]Word, len(argv))
	for i, a := range argv {
		words[i] = Word{Text: a, Static: true}
	}
	return p.call(words, false, 0)
}

// maxDepth bounds how deep MayRun looks into wrappers and scripts given
// to shells; deeper is Maybe.
const maxDepth = 8

// MayRunLine is MayRun for a line parsed already. Lines are read once
// for all the patterns asked of them: a pattern whose program the line
// never names is told at once.
func (p Pattern) MayRunLine(l *Line) Match {
	doubt, names := l.index()
	if !names[p.program] {
		return doubt
	}
	return p.commands(l, 0)
}

// source is MayRun at depth.
func (p Pattern) source(src string, depth int) Match {
	if depth > maxDepth {
		return Maybe
	}
	l, err := Parse(src)
	if err != nil {
		return Maybe
	}
	return p.commands(l, depth)
}

// commands is MayRunLine at depth.
func (p Pattern) commands(l *Line, depth int) Match {
	m := No
	for _, c := range l.Commands {
		if m = max(m, p.call(c, false, depth)); m == Yes {
			break
		}
	}
	return m
}

// call says whether the simple command words may run the pattern's
// command. open means more arguments will be added when it runs (after
// xargs).
func (p Pattern) call(words []Word, open bool, depth int) Match {
	if len(words) == 0 {
		return No
	}
	if depth > maxDepth || !words[0].Static {
		return Maybe
	}
	prog := programName(words[0].Text)
	if p.seen != nil {
		p.seen[prog] = true
	}
	m := No
	if prog == p.program {
		if m = p.arguments(words[1:], open); m == Yes {
			return Yes
		}
	}
	analysed := true // the arguments were read as commands
	switch {
	case wrappers[prog] != wrapNone:
		appends := open || wrappers[prog] == wrapAppends
		for i := 1; i < len(words) && m != Yes; i++ {
			w := words[i]
			if w.Static && isOption(w.Text) {
				continue
			}
			m = max(m, p.call(words[i:], appends, depth+1))
			if w.Static && strings.ContainsAny(w.Text, " \t\n;&|") { // run through a shell (watch, su -c, ssh)
				m = max(m, p.source(w.Text, depth+1))
			}
		}
	case shells[prog]:
		m = max(m, p.shell(words[1:], depth+1))
	case prog == "eval":
		m = max(m, p.eval(words[1:], depth+1))
	default:
		analysed = false
	}
	if !analysed && (p.seen != nil || m == No) && p.named(words[1:]) {
		return max(m, Maybe)
	}
	return m
}

// arguments says whether args, the arguments of the pattern's program,
// hold the pattern's operands in order and its options.
func (p Pattern) arguments(args []Word, open bool) Match {
	j, afterOption := 0, false
	for _, a := range args {
		if j == len(p.operands) {
			break
		}
		if !a.Static {
			return Maybe
		}
		t := strings.ToLower(a.Text)
		switch {
		case t == p.operands[j]:
			j, afterOption = j+1, false
		case isOption(t):
			afterOption = !strings.Contains(t, "=")
		case afterOption: // perhaps the option's value
			afterOption = false
		default:
			return No
		}
	}
	if j < len(p.operands) {
		if open {
			return Maybe
		}
		return No
	}
	for _, o := range p.options {
		if !hasOption(args, o) {
			if open || !allStatic(args) {
				return Maybe
			}
			return No
		}
	}
	return Yes
}

// shell says whether a shell run with args may run the pattern's
// command: the script given with -c is checked; a script file, or the
// commands read from standard input, cannot be seen (Maybe).
func (p Pattern) shell(args []Word, depth int) Match {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.Static {
			return Maybe
		}
		if !isOption(a.Text) {
			return Maybe // a script file
		}
		if shellOptionValue[a.Text] {
			i++
			continue
		}
		if strings.HasPrefix(a.Text, "--") || !strings.ContainsRune(a.Text, 'c') {
			continue
		}
		for _, s := range args[i+1:] { // -c: the first operand is the script
			switch {
			case !s.Static:
				return Maybe
			case !isOption(s.Text):
				return p.source(s.Text, depth)
			}
		}
		return No
	}
	return Maybe // commands from standard input
}

// eval says whether eval with args may run the pattern's command: it runs
// its arguments joined by spaces.
func (p Pattern) eval(args []Word, depth int) Match {
	parts := make([]string, len(args))
	for i, a := range args {
		if !a.Static {
			return Maybe
		}
		parts[i] = a.Text
	}
	return p.source(strings.Join(parts, " "), depth)
}

// named reports whether one of args names the pattern's program, as a
// word or a path or within a longer argument (find -exec git push, ssh
// host git push, alias g=git, python -c "os.system('git push')"): such a
// command may run it in a way no parser sees.
func (p Pattern) named(args []Word) bool {
	for _, a := range args {
		if !a.Static {
			continue
		}
		for _, tok := range strings.FieldsFunc(a.Text, notNameRune) {
			name := programName(tok)
			if p.seen != nil {
				p.seen[name] = true
			} else if name == p.program {
				return true
			}
		}
	}
	return false
}

// notNameRune reports whether r cannot be part of a program's name or
// path.
func notNameRune(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("._+-/\\", r)
}

// programName returns the name a command's first word runs, folded: its
// last path element ("/usr/bin/git" is "git", "C:\git.exe" too), without
// zsh's "=" expansion or an ".exe".
func programName(w string) string {
	w = strings.TrimPrefix(w, "=")
	w = strings.ReplaceAll(w, `\`, "/")
	if w != "" && w != "/" {
		w = path.Base(strings.TrimRight(w, "/"))
	}
	return strings.TrimSuffix(strings.ToLower(w), ".exe")
}

// isOption reports whether an argument is an option: "-x", "--long",
// "--long=v", "+o" (but not "-" or "+" alone, which name standard input or
// are plain operands).
func isOption(s string) bool {
	return len(s) > 1 && (s[0] == '-' || s[0] == '+' && strings.IndexFunc(s[1:], notLetter) < 0)
}

// notLetter reports whether r is not an ASCII letter.
func notLetter(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') }

// hasOption reports whether args hold the option o (folded): the same
// word, "--long=value" for "--long", or short options grouped in any way
// ("-fr" and "-f -r" hold "-rf").
func hasOption(args []Word, o string) bool {
	short := len(o) > 1 && o[0] == '-' && o[1] != '-' && strings.IndexFunc(o[1:], notLetter) < 0
	seen := map[rune]bool{}
	for _, a := range args {
		t := strings.ToLower(a.Text)
		if t == o || strings.HasPrefix(o, "--") && strings.HasPrefix(t, o+"=") {
			return true
		}
		if short && len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.IndexFunc(t[1:], notLetter) < 0 {
			for _, r := range t[1:] {
				seen[r] = true
			}
		}
	}
	if !short {
		return false
	}
	for _, r := range o[1:] {
		if !seen[r] {
			return false
		}
	}
	return true
}

// allStatic reports whether every word of args is known.
func allStatic(args []Word) bool {
	for _, a := range args {
		if !a.Static {
			return false
		}
	}
	return true
}

// How a wrapper runs the command in its arguments.
const (
	wrapNone    = iota
	wrapRuns    // runs the command named by a later argument
	wrapAppends // and adds arguments of its own (read from its input)
)

// wrappers are programs that run the command named by a later argument
// (after their own options and operands).
var wrappers = map[string]int{
	"env": wrapRuns, "command": wrapRuns, "builtin": wrapRuns, "exec": wrapRuns, "nohup": wrapRuns,
	"sudo": wrapRuns, "doas": wrapRuns, "run0": wrapRuns, "pkexec": wrapRuns, "runuser": wrapRuns,
	"time": wrapRuns, "nice": wrapRuns, "ionice": wrapRuns, "chrt": wrapRuns, "taskset": wrapRuns,
	"timeout": wrapRuns, "stdbuf": wrapRuns, "setsid": wrapRuns, "unbuffer": wrapRuns, "chroot": wrapRuns,
	"flock": wrapRuns, "nsenter": wrapRuns, "unshare": wrapRuns, "firejail": wrapRuns, "systemd-run": wrapRuns,
	"caffeinate": wrapRuns, "busybox": wrapRuns, "strace": wrapRuns, "ltrace": wrapRuns, "watch": wrapRuns,
	"script": wrapRuns, "catchsegv": wrapRuns, "valgrind": wrapRuns, "gdb": wrapRuns, "torsocks": wrapRuns,
	"proxychains": wrapRuns, "proxychains4": wrapRuns, "faketime": wrapRuns, "fakeroot": wrapRuns,
	"xargs": wrapAppends, "parallel": wrapAppends,
}

// shellOptionValue are the options of a shell that take the next
// argument as their value.
var shellOptionValue = map[string]bool{"-o": true, "+o": true, "-O": true, "+O": true, "--rcfile": true, "--init-file": true}

// shells are programs that run a script given with -c, in a file, or on
// their standard input.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true,
	"fish": true, "csh": true, "tcsh": true, "yash": true, "posh": true, "rbash": true,
}
