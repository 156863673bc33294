// SPDX-License-Identifier: GPL-3.0-or-later
// Flamenco 3 job type: GPU Particles. One task simulates the shot into the .blend's
// simulation cache (preroll included); render tasks over frame chunks depend on it and
// each start from the cache's latest checkpoint at or before its first frame.
// Written against Flamenco 3's job compiler API (JOB_TYPE, compileJob, author.Task,
// author.Command "blender-render", frameChunker) as its bundled simple-blender-render.js uses it.

const JOB_TYPE = {
    label: "GPU Particles",
    description: "Simulate GPU Particles effects to their disk cache once, then bake frames in chunks",
    settings: [
        { key: "frames", type: "string", required: true,
          eval: "f'{C.scene.frame_start}-{C.scene.frame_end}'",
          description: "Frame range to bake, inside the scene's range. Examples: '1-240', '101-200'" },
        { key: "chunk_size", type: "int32", default: 10,
          description: "Frames one render task bakes (each starts from the cache's nearest checkpoint)" },
        { key: "blender_cmd", type: "string", default: "{blender}", visible: "hidden" },
        { key: "blender_args", type: "string", default: "{blenderArgs}", visible: "hidden",
          description: "Blender's own arguments (-b -y by default on Flamenco workers)" },
        { key: "blendfile", type: "string", required: true, visible: "web",
          description: "Blend file with the effects; its simulation cache folder must be on shared storage" },
    ],
};

function compileJob(job) {
    const settings = job.settings;
    const [first, last] = frameRange(settings.frames);
    const simulate = author.Task("simulate-to-cache", "blender");
    simulate.addCommand(blenderCommand(settings, "bpy.ops.gpu_particles.bake_simulation()"));
    job.addTask(simulate);
    for (const chunk of frameChunker(`${first}-${last}`, settings.chunk_size)) {
        const [start, end] = frameRange(chunk);
        const render = author.Task(`bake-${chunk}`, "blender");
        render.addCommand(blenderCommand(settings,
            `bpy.ops.gpu_particles.bake(frame_start=${start}, frame_end=${end})`));
        render.addDependency(simulate);
        job.addTask(render);
    }
}

// One headless Blender run of an operator of the installed extension; a failed operator
// raises, so Blender exits non-zero and Flamenco marks the task failed.
function blenderCommand(settings, operator) {
    return author.Command("blender-render", {
        exe: settings.blender_cmd,
        exeArgs: settings.blender_args,
        argsBefore: [],
        blendfile: settings.blendfile,
        args: ["--python-exit-code", "1", "--python-expr", `import bpy; ${operator}`],
    });
}

function frameRange(text) {
    const match = /^\s*(\d+)\s*(?:-\s*(\d+))?\s*$/.exec(String(text));
    if (!match) {
        throw `frames must be one range like 1-240, not '${text}'`;
    }
    const first = parseInt(match[1]);
    const last = match[2] === undefined ? first : parseInt(match[2]);
    if (last < first) {
        throw `frame range runs backwards: ${first} to ${last}`;
    }
    return [first, last];
}
