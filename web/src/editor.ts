// CodeMirror 6 set-up: the input editor (MLIR highlighting, verifier
// diagnostics as squiggles, history, keyboard) and the read-only output
// view with changed-sharding highlights. Themes switch through compartments.
import { Compartment, EditorState, RangeSetBuilder, StateEffect, StateField, type Extension } from "@codemirror/state";
import { Decoration, EditorView, keymap, lineNumbers, highlightActiveLine, drawSelection, type DecorationSet } from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { syntaxHighlighting, HighlightStyle, bracketMatching } from "@codemirror/language";
import { linter, lintGutter, setDiagnostics, type Diagnostic as CmDiagnostic } from "@codemirror/lint";
import { tags as t } from "@lezer/highlight";
import { mlir } from "./mlir-lang";
import type { Diagnostic } from "@shardlab/wasm";

const lightStyle = HighlightStyle.define([
  { tag: t.comment, color: "#6a737d", fontStyle: "italic" },
  { tag: t.string, color: "#032f62" },
  { tag: t.variableName, color: "#005cc5" },
  { tag: t.definition(t.name), color: "#6f42c1" },
  { tag: t.meta, color: "#b31d28" },
  { tag: t.keyword, color: "#d73a49", fontWeight: "600" },
  { tag: t.typeName, color: "#22863a" },
  { tag: t.number, color: "#005cc5" },
  { tag: t.atom, color: "#e36209" },
]);
const darkStyle = HighlightStyle.define([
  { tag: t.comment, color: "#8b949e", fontStyle: "italic" },
  { tag: t.string, color: "#a5d6ff" },
  { tag: t.variableName, color: "#79c0ff" },
  { tag: t.definition(t.name), color: "#d2a8ff" },
  { tag: t.meta, color: "#ffa198" },
  { tag: t.keyword, color: "#ff7b72", fontWeight: "600" },
  { tag: t.typeName, color: "#7ee787" },
  { tag: t.number, color: "#79c0ff" },
  { tag: t.atom, color: "#ffa657" },
]);

const baseTheme = EditorView.theme({
  "&": { height: "100%", fontSize: "13px" },
  ".cm-scroller": { fontFamily: "ui-monospace, 'DejaVu Sans Mono', monospace" },
  ".cm-changed": { backgroundColor: "var(--changed-bg)", borderRadius: "2px" },
  ".cm-changedLine": { backgroundColor: "var(--changed-line)" },
});

export function themeExtension(dark: boolean): Extension {
  return [
    syntaxHighlighting(dark ? darkStyle : lightStyle),
    EditorView.theme(
      {
        "&": { backgroundColor: "var(--panel)", color: "var(--fg)" },
        ".cm-gutters": { backgroundColor: "var(--panel-2)", color: "var(--muted)", border: "none" },
        ".cm-activeLine": { backgroundColor: "var(--active-line)" },
        ".cm-activeLineGutter": { backgroundColor: "var(--active-line)" },
        "&.cm-focused .cm-cursor": { borderLeftColor: "var(--fg)" },
        ".cm-selectionBackground, &.cm-focused .cm-selectionBackground": { backgroundColor: "var(--selection) !important" },
      },
      { dark },
    ),
  ];
}

/** 1-based line/column to a document offset (clamped). */
export function offsetOf(state: EditorState, line: number, column: number): number {
  const l = state.doc.line(Math.min(Math.max(line, 1), state.doc.lines));
  return Math.min(l.from + Math.max(column - 1, 0), l.to);
}

/** A diagnostic's message with its related locations ("in function @main at 3:1"). */
export function diagnosticText(d: Diagnostic): string {
  const related = d.related.map((r) => `${r.message} at ${r.line}:${r.column}`);
  return related.length ? `${d.message} (${related.join("; ")})` : d.message;
}

/** Core diagnostics as CodeMirror lint diagnostics over the range each is about. */
export function toCmDiagnostics(state: EditorState, diagnostics: Diagnostic[]): CmDiagnostic[] {
  return diagnostics
    .filter((d) => d.range.start.line > 0)
    .map((d) => {
      const { start, end } = d.range;
      const from = offsetOf(state, start.line, start.column || 1);
      const to = end.line > 0 ? offsetOf(state, end.line, end.column || 1) : from;
      const severity = d.severity === "error" ? "error" : d.severity === "warning" ? "warning" : "info";
      return { from, to: to > from ? to : Math.min(from + 1, state.doc.length), severity, message: diagnosticText(d) };
    });
}

export interface InputEditor {
  view: EditorView;
  setTheme(dark: boolean): void;
  setDiagnostics(diagnostics: Diagnostic[]): void;
  setText(text: string): void;
}

export function createInputEditor(
  parent: HTMLElement,
  text: string,
  dark: boolean,
  onChange: (text: string) => void,
  onCursor: (line: number, column: number) => void,
): InputEditor {
  const theme = new Compartment();
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: text,
      extensions: [
        lineNumbers(),
        history(),
        drawSelection(),
        highlightActiveLine(),
        bracketMatching(),
        lintGutter(),
        linter(null),
        mlir,
        baseTheme,
        theme.of(themeExtension(dark)),
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ "aria-label": "Input module" }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChange(update.state.doc.toString());
          if (update.selectionSet || update.docChanged) {
            const head = update.state.selection.main.head;
            const line = update.state.doc.lineAt(head);
            onCursor(line.number, head - line.from + 1);
          }
        }),
      ],
    }),
  });
  return {
    view,
    setTheme: (d) => view.dispatch({ effects: theme.reconfigure(themeExtension(d)) }),
    setDiagnostics: (diagnostics) => view.dispatch(setDiagnostics(view.state, toCmDiagnostics(view.state, diagnostics))),
    setText: (t) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: t } }),
  };
}

/** A changed range of the output, as document offsets. */
export interface Range {
  from: number;
  to: number;
}

const setChanged = StateEffect.define<{ ranges: Range[]; lines: number[] }>();
const changedField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects)
      if (e.is(setChanged)) {
        const builder = new RangeSetBuilder<Decoration>();
        const items: { from: number; to: number; d: Decoration }[] = [];
        for (const line of e.value.lines) {
          const l = tr.state.doc.line(line);
          items.push({ from: l.from, to: l.from, d: Decoration.line({ class: "cm-changedLine" }) });
        }
        for (const r of e.value.ranges)
          if (r.to > r.from) items.push({ from: r.from, to: r.to, d: Decoration.mark({ class: "cm-changed" }) });
        items.sort((a, b) => a.from - b.from || (a.from === a.to ? -1 : 1));
        for (const it of items) builder.add(it.from, it.to, it.d);
        deco = builder.finish();
      }
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

export interface OutputView {
  view: EditorView;
  setTheme(dark: boolean): void;
  show(text: string, ranges: Range[], lines: number[]): void;
}

export function createOutputView(parent: HTMLElement, dark: boolean): OutputView {
  const theme = new Compartment();
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: "",
      extensions: [
        lineNumbers(),
        mlir,
        baseTheme,
        changedField,
        theme.of(themeExtension(dark)),
        EditorState.readOnly.of(true),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ "aria-label": "Output module (read only)" }),
      ],
    }),
  });
  return {
    view,
    setTheme: (d) => view.dispatch({ effects: theme.reconfigure(themeExtension(d)) }),
    show: (text, ranges, lines) => {
      // Replace only what differs from the shown text: an edit usually
      // changes a few lines of a large output, and CodeMirror then keeps
      // its layout and syntax tree for the rest.
      const old = view.state.doc.toString();
      if (old !== text) {
        let from = 0;
        const max = Math.min(old.length, text.length);
        while (from < max && old.charCodeAt(from) === text.charCodeAt(from)) from++;
        let tail = 0;
        while (tail < max - from && old.charCodeAt(old.length - 1 - tail) === text.charCodeAt(text.length - 1 - tail)) tail++;
        view.dispatch({ changes: { from, to: old.length - tail, insert: text.slice(from, text.length - tail) } });
      }
      view.dispatch({ effects: setChanged.of({ ranges, lines }) });
    },
  };
}
