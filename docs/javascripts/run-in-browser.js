// "Run in browser" for executed Python blocks (scripts/coursesite/run_in_browser.py, docs/adr/0011).
// Imported by a block's button on the first click, never on page load. The first run loads
// Pyodide from assets/vendor/pyodide/ (npm `pyodide`, core only) and unpacks assets/run/course.zip
// (the course's snippets/ as the build used them) into /course; later runs reuse both.
// Each run executes the code the way markdown-exec did at build time: `print` writes to a buffer,
// `__name__` is the block's module name, the working directory is the repository root.

const SITE = new URL("../", import.meta.url); // this file is <site>/javascripts/
const PYODIDE = new URL("assets/vendor/pyodide/", SITE);
const RUN = new URL("assets/run/", SITE);
const HIDE = "markdown-exec: hide";

const TEXT = {
  zh: {
    run: "运行",
    reset: "还原",
    loading: "正在加载浏览器里的 Python（约 13 MB，只需一次）…",
    running: "正在运行…",
    done: "完成",
    failed: "出错了",
    output: "浏览器中的输出",
    editor: "可编辑的代码",
    offline: "无法加载运行环境：",
  },
  en: {
    run: "Run",
    reset: "Reset",
    loading: "Loading Python in your browser (about 13 MB, once)…",
    running: "Running…",
    done: "Done",
    failed: "Error",
    output: "Output in your browser",
    editor: "Editable code",
    offline: "Could not load the runtime: ",
  },
};

// Mirrors markdown_exec/_internal/formatters/python.py (_run_python, _buffer_print).
const RUNNER_PY = `
import linecache, re, sys, traceback, types
from functools import partial
from io import StringIO

def _buffer_print(buffer, *texts, end="\\n", **kwargs):
    buffer.write(" ".join(str(text) for text in texts) + end)

def run_block(code, block_id):
    filename = f"<code block: id {block_id}>" if block_id else "<code block: n1>"
    module_name = re.sub(r"[^a-zA-Z\\d]+", "_", filename)
    sys.modules[module_name] = types.ModuleType(module_name)
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    buffer = StringIO()
    exec_globals = {"__name__": module_name, "print": partial(_buffer_print, buffer)}
    try:
        exec(compile(code, filename, "exec"), exec_globals)
    except BaseException as error:
        trace = traceback.TracebackException.from_exception(error)
        trace.stack = traceback.StackSummary.from_list(
            [frame for frame in trace.stack if frame.filename != "<exec>"]
        )
        return buffer.getvalue(), "".join(trace.format())
    return buffer.getvalue(), None

def call_json(module, function, kwargs_json):
    import importlib, json
    try:
        return getattr(importlib.import_module(module), function)(**json.loads(kwargs_json)), None
    except Exception as error:
        return None, f"{type(error).__name__}: {error}"
`;

let runtime = null;

function loadRuntime() {
  runtime ??= (async () => {
    const { loadPyodide } = await import(new URL("pyodide.mjs", PYODIDE).href);
    const [pyodide, archive] = await Promise.all([
      loadPyodide({ indexURL: PYODIDE.href }),
      fetchOk(new URL("course.zip", RUN)).then((r) => r.arrayBuffer()),
    ]);
    pyodide.unpackArchive(archive, "zip", { extractDir: "/course" });
    pyodide.runPython(`import os, sys\nsys.path.insert(0, "/course/snippets")\nos.chdir("/course")`);
    pyodide.runPython(RUNNER_PY);
    return pyodide;
  })();
  runtime.catch(() => (runtime = null)); // a failed load can be retried
  return runtime;
}

async function fetchOk(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url.pathname}: HTTP ${response.status}`);
  return response;
}

/** Runs `code` as the build did; resolves to {output, error} (error: Python's traceback). */
export async function runPython(code, blockId = "") {
  const pyodide = await loadRuntime();
  const result = pyodide.globals.get("run_block")(code, blockId);
  const [output, error] = result.toJs();
  result.destroy();
  return { output, error };
}

/** Calls module.function(**kwargs) of the course's code; resolves to {value, error}. */
export async function callPython(module, name, kwargs) {
  const pyodide = await loadRuntime();
  const result = pyodide.globals.get("call_json")(module, name, JSON.stringify(kwargs));
  const [value, error] = result.toJs();
  result.destroy();
  return { value, error };
}

/** The playground's form (scripts/coursesite/run_in_browser.py): snippets/playground/web.py report(). */
export async function playground(form) {
  const t = text();
  addStyle();
  const status = form.querySelector(".run-status");
  const button = form.querySelector("button[type=submit]");
  const target = form.nextElementSibling;
  const kwargs = Object.fromEntries(new FormData(form));
  kwargs.lang = document.documentElement.lang === "zh" ? "zh" : "en";
  button.disabled = true;
  status.textContent = runtime ? t.running : t.loading;
  try {
    const { value, error } = await callPython("playground.web", "report", kwargs);
    if (error) {
      const pre = Object.assign(document.createElement("pre"), { textContent: error });
      pre.className = "run-output run-error";
      target.replaceChildren(pre);
    } else {
      target.innerHTML = value; // HTML from the course's own code, its text escaped there
    }
    status.textContent = error ? t.failed : t.done;
  } catch (error) {
    status.textContent = t.offline + error.message;
  } finally {
    button.disabled = false;
    form.dataset.runs = String(Number(form.dataset.runs || 0) + 1);
  }
}

function text() {
  return TEXT[document.documentElement.lang] || TEXT.en;
}

function addStyle() {
  if (document.getElementById("run-in-browser-style")) return;
  const style = document.createElement("style");
  style.id = "run-in-browser-style";
  style.textContent = `
.run-block .run-bar { display: flex; flex-wrap: wrap; gap: .5em; align-items: center; }
.run-block .run-status { font-size: .75em; }
.md-typeset .run-editor { box-sizing: border-box; width: 100%; margin: .5em 0; padding: .6em;
  font-family: var(--md-code-font-family); font-size: .8em; line-height: 1.4; tab-size: 4;
  color: var(--md-code-fg-color); background: var(--md-code-bg-color);
  border: 1px solid var(--md-default-fg-color--lighter); border-radius: .1rem; resize: vertical;
  white-space: pre; overflow-x: auto; }
.md-typeset .run-output { margin: .5em 0; padding: .6em; white-space: pre-wrap;
  overflow-wrap: anywhere; font-size: .8em; background: var(--md-code-bg-color); }
.md-typeset .run-output.run-error { border-left: .2rem solid var(--md-typeset-del-color, #d33); }
.md-typeset .run-output-label { font-size: .75em; margin: .5em 0 0; }`;
  document.head.append(style);
}

/** The code shown to the reader: the lines markdown-exec shows, when its hidden lines all come
 * last (then a run appends them again); otherwise every line. */
export function splitHidden(code) {
  const lines = code.split("\n");
  const firstHidden = lines.findIndex((line) => line.includes(HIDE));
  const tail = firstHidden < 0 ? [] : lines.slice(firstHidden);
  if (tail.some((line) => line.trim() && !line.includes(HIDE))) return { shown: code, hidden: "" };
  const shown = lines.slice(0, firstHidden < 0 ? lines.length : firstHidden).join("\n").trim();
  return { shown, hidden: tail.filter((line) => line.includes(HIDE)).join("\n") };
}

/** Called by a block's button (its onclick imports this module). */
export async function start(button) {
  if (button.dataset.started) return;
  button.dataset.started = "1";
  const t = text();
  const block = button.closest(".run-block");
  addStyle();
  const status = Object.assign(document.createElement("span"), { className: "run-status" });
  status.setAttribute("role", "status");
  const bar = document.createElement("div");
  bar.className = "run-bar";
  button.replaceWith(bar);
  bar.append(button, status);
  status.textContent = t.loading;
  button.disabled = true;

  let code;
  try {
    code = await (await fetchOk(new URL(button.dataset.run, RUN))).text();
  } catch (error) {
    status.textContent = t.offline + error.message;
    delete button.dataset.started;
    button.disabled = false;
    return;
  }
  const { shown, hidden } = splitHidden(code);
  const editor = document.createElement("textarea");
  Object.assign(editor, { className: "run-editor", value: shown, spellcheck: false });
  editor.setAttribute("aria-label", t.editor);
  editor.setAttribute("autocapitalize", "off");
  editor.rows = Math.min(shown.split("\n").length + 1, 30);
  const source = block.querySelector(".language-python.highlight");
  if (source) {
    source.hidden = true;
    source.after(editor);
  } else {
    bar.after(editor);
  }
  const label = Object.assign(document.createElement("p"), {
    className: "run-output-label",
    textContent: t.output,
  });
  const output = document.createElement("pre");
  output.className = "run-output";
  output.setAttribute("aria-live", "polite");
  output.tabIndex = 0;
  editor.after(label, output);

  const reset = Object.assign(document.createElement("button"), {
    type: "button",
    className: "md-button run-reset",
    textContent: t.reset,
  });
  reset.addEventListener("click", () => (editor.value = shown));
  button.textContent = t.run;
  button.classList.add("md-button--primary");
  button.onclick = null;
  bar.insertBefore(reset, status);

  const run = async () => {
    button.disabled = true;
    status.textContent = runtime ? t.running : t.loading;
    // unchanged code runs exactly as the build ran it (hidden lines in place)
    const program = editor.value === shown ? code : [editor.value, hidden].join("\n");
    try {
      const { output: printed, error } = await runPython(program, button.dataset.id);
      output.textContent = printed + (error || "");
      output.classList.toggle("run-error", Boolean(error));
      status.textContent = error ? t.failed : t.done;
    } catch (error) {
      output.textContent = "";
      status.textContent = t.offline + error.message;
    } finally {
      button.disabled = false;
      block.dataset.runs = String(Number(block.dataset.runs || 0) + 1); // for tests and scripts
    }
  };
  button.addEventListener("click", run);
  await run();
}
