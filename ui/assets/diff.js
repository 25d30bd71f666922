// A line diff: what an action would change in a file, and what a person
// changed in an action's arguments. The difference is a longest common
// subsequence of lines, computed after the common head and tail are set
// aside, so that an edit in a long file costs little.

// Beyond this many cells (lines of one side times lines of the other, once
// the common head and tail are set aside) the table is not built: the
// middle is shown as removed, then added. Still correct, only not minimal.
const MAX_CELLS = 4_000_000;

// lineDiff returns the difference from a to b as [{op, text, eol}]: op is
// " " (a line of both), "-" (only in a) or "+" (only in b); text is the
// line without its line break; eol is false for a last line that has none.
// Lines are equal when their text and their line break are.
export function lineDiff(a, b) {
  const x = splitLines(a);
  const y = splitLines(b);
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail++;
  const mid = lcs(x.slice(head, x.length - tail), y.slice(head, y.length - tail));
  const same = (l) => line(" ", l);
  return [...x.slice(0, head).map(same), ...mid, ...x.slice(x.length - tail).map(same)];
}

// splitLines splits s into lines that keep their "\n" (the last one may
// have none); "" has no lines.
export function splitLines(s) {
  return String(s ?? "").match(/[^\n]*\n|[^\n]+$/g) || [];
}

function line(op, l) {
  const eol = l.endsWith("\n");
  return { op, text: eol ? l.slice(0, -1) : l, eol };
}

// lcs diffs two lists of lines through the table of their longest common
// subsequences, removals before additions where both happen.
function lcs(x, y) {
  const n = x.length;
  const m = y.length;
  if (n === 0 || m === 0 || n * m > MAX_CELLS) {
    return [...x.map((l) => line("-", l)), ...y.map((l) => line("+", l))];
  }
  // Lines as small integers: comparing them is then cheap.
  const ids = new Map();
  const id = (l) => {
    let v = ids.get(l);
    if (v === undefined) {
      v = ids.size;
      ids.set(l, v);
    }
    return v;
  };
  const xs = Int32Array.from(x, id);
  const ys = Int32Array.from(y, id);
  // t[i*(m+1)+j]: the length of the longest common subsequence of x[i:]
  // and y[j:].
  const w = m + 1;
  const t = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      t[i * w + j] = xs[i] === ys[j] ? t[(i + 1) * w + j + 1] + 1 : Math.max(t[(i + 1) * w + j], t[i * w + j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (xs[i] === ys[j]) {
      out.push(line(" ", x[i]));
      i++;
      j++;
    } else if (t[(i + 1) * w + j] >= t[i * w + j + 1]) {
      out.push(line("-", x[i++]));
    } else {
      out.push(line("+", y[j++]));
    }
  }
  while (i < n) out.push(line("-", x[i++]));
  while (j < m) out.push(line("+", y[j++]));
  return out;
}

// diffStats counts the lines a diff adds and removes.
export function diffStats(ops) {
  let added = 0;
  let removed = 0;
  for (const o of ops) {
    if (o.op === "+") added++;
    else if (o.op === "-") removed++;
  }
  return { added, removed };
}
