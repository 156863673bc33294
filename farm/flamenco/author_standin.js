// A stand-in for Flamenco 3 Manager's job-compiler runtime, to run a job type under Node the way the
// Manager runs it (internal/manager/job_compilers: scripts.go, js_globals.go, author.go):
// - the script is compiled in strict mode (goja.Compile(filename, script, true));
// - the globals are author.Task, author.Command, frameChunker, print and path;
// - job.settings is the submitted settings as they are: the Manager neither fills JOB_TYPE defaults
//   nor checks `required` (the Blender add-on does both before it submits), so neither does this;
// - frameChunker is a port of jsFrameChunker, two-frame chunks ("11,12") and gaps ("9,10,20,21") included.
// It prints the compiled job as JSON: tasks with their type, dependencies and commands.
//
//   node author_standin.js JOB_TYPE.js '{"settings": {...}}'
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

class Task {
    constructor(name, type) {
        this.name = String(name).trim();
        this.type = String(type).trim();
        if (!this.name) throw new Error("author.Task(name, type): name is required");
        if (!this.type) throw new Error("author.Task(name, type): type is required");
        this.commands = [];
        this.dependencies = [];
    }
    addCommand(command) {
        if (!(command instanceof Command)) throw new TypeError("addCommand takes an author.Command");
        this.commands.push(command);
    }
    addDependency(task) {
        if (!(task instanceof Task)) throw new TypeError("addDependency takes an author.Task");
        this.dependencies.push(task);
    }
}

class Command {
    constructor(name, parameters) {
        this.name = String(name);
        this.parameters = parameters;
    }
}

function invalidRange(range, message) {
    return new Error(`invalid range "${range}": ${message}`);
}

// jsFrameChunker: the frames of a range like "1..10,20-25,40" (sorted, each once) in chunks of at most
// `chunkSize`, each chunk written back by frameRangeMerge. goja hands the Go function a string and an int.
function frameChunker(frameRange, chunkSize) {
    const range = String(frameRange).trim();
    const size = Math.trunc(Number(chunkSize)) || 0;
    if (range.length === 0) throw invalidRange(range, "empty range");
    if (size < 1) throw new Error(`invalid chunk size, must be positive number: ${size}`);
    const frames = frameRangeExplode(range);
    if (frames.length === 0) throw invalidRange(range, "empty range");
    const chunks = [];
    for (let i = 0; i < frames.length; i += size) {
        chunks.push(frameRangeMerge(frames.slice(i, i + size)));
    }
    return chunks;
}

// A part "A-B" with B < A adds no frames, as in Go's loop; a whole range of only such parts is empty.
function frameRangeExplode(frameRange) {
    const range = frameRange.replaceAll("..", "-");
    const parseInt64 = (text) => (/^[+-]?\d+$/.test(text.trim()) ? Number(text.trim()) : NaN);
    const frames = new Set();
    for (const part of range.split(",")) {
        const startEnd = part.split("-").map(parseInt64);
        if (startEnd.length > 2 || startEnd.some(Number.isNaN)) throw invalidRange(range, part);
        const [start, end = start] = startEnd;
        for (let frame = start; frame <= end; frame++) frames.add(frame);
    }
    return [...frames].sort((a, b) => a - b);
}

// Consecutive frames as "A-B"; a run of two frames as "A,B" and of one as "A"; runs joined by ",".
function frameRangeMerge(frames) {
    const ranges = [];
    let start = frames[0];
    for (let i = 1; i <= frames.length; i++) {
        if (i < frames.length && frames[i] === frames[i - 1] + 1) continue;
        const end = frames[i - 1];
        if (start === end) ranges.push(`${start}`);
        else if (start + 1 === end) ranges.push(`${start}`, `${end}`);
        else ranges.push(`${start}-${end}`);
        start = frames[i];
    }
    return ranges.join(",");
}

function compile(filename, source, submitted) {
    const tasks = [];
    const job = { name: submitted.name || "job", jobType: path.basename(filename, ".js").replaceAll("_", "-"),
                  priority: submitted.priority ?? 50, created: new Date(), settings: submitted.settings || {},
                  metadata: submitted.metadata || {},
                  addTask: (task) => {
                      if (!(task instanceof Task)) throw new TypeError("job.addTask takes an author.Task");
                      tasks.push(task);
                  } };
    const context = vm.createContext({ author: { Task: (n, t) => new Task(n, t), Command: (n, p) => new Command(n, p) },
                                       frameChunker, print: (...args) => console.error(...args), path });
    // The directive shares the script's first line, so error line numbers stay the file's own.
    vm.runInContext(`"use strict"; ${source}\n;this.JOB_TYPE = JOB_TYPE; this.compileJob = compileJob;`, context,
                    { filename });
    context.compileJob(job);
    return {
        label: context.JOB_TYPE.label,
        tasks: tasks.map((t) => ({ name: t.name, type: t.type, dependencies: t.dependencies.map((d) => d.name),
                                   commands: t.commands.map((c) => ({ name: c.name, parameters: c.parameters })) })),
    };
}

const [script, jobJson] = process.argv.slice(2);
try {
    console.log(JSON.stringify(compile(script, fs.readFileSync(script, "utf8"), JSON.parse(jobJson)), null, 1));
} catch (error) {
    console.error(`job compile failed: ${error instanceof Error ? error.message : error}`);
    process.exit(2);
}
