// A stand-in for Flamenco 3 Manager's job-compiler runtime, to run a job type under Node:
// the globals a job compiler script sees (author.Task, author.Command, frameChunker, print)
// with the shapes Flamenco's documentation and bundled job types use. It prints the compiled
// job as JSON: tasks with their type, dependencies and commands (name and parameters).
//
//   node author_standin.js JOB_TYPE.js '{"settings": {...}}'
"use strict";
const fs = require("fs");
const vm = require("vm");

class Task {
    constructor(name, type) {
        if (typeof name !== "string" || typeof type !== "string") throw new TypeError("author.Task(name, type)");
        this.name = name;
        this.type = type;
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
        if (typeof name !== "string" || typeof parameters !== "object") throw new TypeError("author.Command(name, parameters)");
        this.name = name;
        this.parameters = parameters;
    }
}

// Flamenco's frameChunker: "1-10,20" style ranges into chunks of at most `chunkSize` frames,
// each "a-b" (or "a" for one frame).
function frameChunker(frames, chunkSize) {
    const all = [];
    for (const part of String(frames).split(",")) {
        const [a, b] = part.split("-").map((s) => parseInt(s.trim()));
        for (let f = a; f <= (Number.isNaN(b) || b === undefined ? a : b); f++) all.push(f);
    }
    const chunks = [];
    for (let i = 0; i < all.length; i += chunkSize) {
        const chunk = all.slice(i, i + chunkSize);
        chunks.push(chunk.length === 1 ? `${chunk[0]}` : `${chunk[0]}-${chunk[chunk.length - 1]}`);
    }
    return chunks;
}

function compile(source, job) {
    const tasks = [];
    job.addTask = (task) => {
        if (!(task instanceof Task)) throw new TypeError("job.addTask takes an author.Task");
        tasks.push(task);
    };
    const context = vm.createContext({ author: { Task: (n, t) => new Task(n, t), Command: (n, p) => new Command(n, p) },
                                       frameChunker, print: (...args) => console.error(...args), path: require("path") });
    vm.runInContext(source + "\n;this.JOB_TYPE = JOB_TYPE; this.compileJob = compileJob;", context);
    const jobType = context.JOB_TYPE;
    for (const setting of jobType.settings) {  // defaults fill what the submission left out, as the Manager does
        if (job.settings[setting.key] === undefined && setting.default !== undefined) job.settings[setting.key] = setting.default;
        if (setting.required && job.settings[setting.key] === undefined) throw `setting '${setting.key}' is required`;
    }
    context.compileJob(job);
    return {
        label: jobType.label,
        tasks: tasks.map((t) => ({ name: t.name, type: t.type, dependencies: t.dependencies.map((d) => d.name),
                                   commands: t.commands.map((c) => ({ name: c.name, parameters: c.parameters })) })),
    };
}

const [script, jobJson] = process.argv.slice(2);
const job = JSON.parse(jobJson);
job.settings = job.settings || {};
try {
    console.log(JSON.stringify(compile(fs.readFileSync(script, "utf8"), job), null, 1));
} catch (error) {
    console.error(`job compile failed: ${error}`);
    process.exit(2);
}
