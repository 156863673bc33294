// SPDX-License-Identifier: GPL-3.0-or-later
// Flamenco 3 job type: GPU Particles. One task simulates the shot into the .blend's
// simulation cache (preroll included); render tasks over frame chunks depend on it and
// each start from the cache's latest checkpoint at or before its first frame.
// Written against Flamenco 3's job compiler (internal/manager/job_compilers): the script runs in
// strict mode; job.settings holds what the submission sent (the Manager fills no defaults and checks
// no `required`), and frameChunker returns chunks like "1-10", "11,12", "7" or "9,10,20,21".

const JOB_TYPE = {
    label: "GPU Particles",
    description: "Simulate GPU Particles effects to their disk cache once, then bake frames in chunks",
    settings: [
        { key: "frames", type: "string", required: true,
          eval: "f'{C.scene.frame_start}-{C.scene.frame_end}'",
          description: "Frames to bake, inside the scene's range. Examples: '1-240', '101-200', '1-10,20-30'" },
        { key: "chunk_size", type: "int32", default: 10, propargs: { min: 1 },
          description: "Frames one render task bakes (each starts from the cache's nearest checkpoint)" },
        { key: "blendfile", type: "string", required: true, visible: "web",
          description: "Blend file with the effects; its simulation cache folder must be on shared storage" },
    ],
};

function compileJob(job) {
    const settings = job.settings;
    const frames = requiredSetting(settings, "frames");
    frameRuns(frames);  // refuses a malformed or backwards range with its own message
    const chunkSize = requiredSetting(settings, "chunk_size");
    if (!Number.isInteger(chunkSize) || chunkSize < 1) {
        throw `chunk_size must be a whole number of frames, 1 or more, not ${chunkSize}`;
    }
    const blendfile = requiredSetting(settings, "blendfile");
    const simulate = author.Task("simulate-to-cache", "blender");
    simulate.addCommand(blenderCommand(blendfile, "bpy.ops.gpu_particles.bake_simulation()"));
    job.addTask(simulate);
    for (const chunk of frameChunker(frames, chunkSize)) {
        const bakes = frameRuns(chunk).map(([start, end]) =>
            `bpy.ops.gpu_particles.bake(frame_start=${start}, frame_end=${end})`);
        const render = author.Task(`bake-${chunk}`, "blender");
        render.addCommand(blenderCommand(blendfile, bakes.join("; ")));
        render.addDependency(simulate);
        job.addTask(render);
    }
}

// The Manager passes settings through as submitted: one left out is refused here, by name.
function requiredSetting(settings, key) {
    const value = settings[key];
    if (value === undefined || value === null || value === "") {
        throw `setting '${key}' is missing`;
    }
    return value;
}

// One headless Blender run of operators of the installed extension; a failed operator raises,
// so Blender exits non-zero and Flamenco marks the task failed. {blender} and {blenderArgs} are
// the Manager's variables, as in Flamenco's own Blender job types.
function blenderCommand(blendfile, operators) {
    return author.Command("blender-render", {
        exe: "{blender}",
        exeArgs: "{blenderArgs}",
        argsBefore: [],
        blendfile: blendfile,
        args: ["--python-exit-code", "1", "--python-expr", `import bpy; ${operators}`],
    });
}

// The runs of consecutive frames of a frame list in Flamenco's notation ("1-10", "11,12", "9,10,20-25",
// "A..B" too): [[first, last], ...], consecutive single frames joined into one run.
function frameRuns(text) {
    const runs = [];
    for (const part of String(text).replaceAll("..", "-").split(",")) {
        const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
        if (!match) {
            throw `frames must be ranges like 1-240 or 1-10,20-30, not '${text}'`;
        }
        const first = parseInt(match[1]);
        const last = match[2] === undefined ? first : parseInt(match[2]);
        if (last < first) {
            throw `frame range runs backwards: ${first} to ${last}`;
        }
        const previous = runs[runs.length - 1];
        if (previous && previous[1] + 1 === first) previous[1] = last;
        else runs.push([first, last]);
    }
    return runs;
}
