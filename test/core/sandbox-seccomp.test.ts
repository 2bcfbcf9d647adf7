import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import { seccompBlocked, seccompFilter, seccompProgram, seccompSyscallNumber } from "../../src/core/index.js";
import { writeSeccompFile, type BpfInstruction } from "../../src/core/sandbox-seccomp.js";

/**
 * The seccomp filter's program, run by a classic-BPF interpreter of the few instructions it uses
 * (load word, jeq, jge, ret): what each syscall and architecture gets. The kernel runs it in
 * test/acp/agent/serve-sandbox.e2e.test.ts (the escape matrix).
 */
const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const KILL = 0x80000000;
const AUDIT = { x64: 0xc000003e, arm64: 0xc00000b7, i386: 0x40000003 };

function run(program: BpfInstruction[], data: { nr: number; arch: number }): number {
  let acc = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const ins = program[pc]!;
    if (ins.code === 0x20) acc = ins.k === 0 ? data.nr : ins.k === 4 ? data.arch : NaN;
    else if (ins.code === 0x15) pc += acc === ins.k ? ins.jt : ins.jf;
    else if (ins.code === 0x35) pc += acc >= ins.k ? ins.jt : ins.jf;
    else if (ins.code === 0x06) return ins.k;
    else throw new Error(`unexpected opcode ${ins.code}`);
  }
  throw new Error("fell off the end");
}

describe.each(["x64", "arm64"] as const)("the seccomp filter on %s", (arch) => {
  const program = seccompProgram(arch)!;
  const native = AUDIT[arch];

  it("refuses every listed syscall with EPERM", () => {
    for (const name of seccompBlocked) expect({ name, ret: run(program, { nr: seccompSyscallNumber(name, arch)!, arch: native }) }).toEqual({ name, ret: EPERM });
  });

  it("allows the others (read, write, openat, clone, execve, ptrace…)", () => {
    const allowed = arch === "x64" ? [0, 1, 257, 56, 59, 101, 435] : [63, 64, 56, 220, 221, 117, 435];
    for (const nr of allowed) expect(run(program, { nr, arch: native })).toBe(ALLOW);
  });

  it("kills a syscall of another architecture (i386 through int 0x80), whose numbers differ", () => {
    expect(run(program, { nr: 1, arch: AUDIT.i386 })).toBe(KILL);
  });

  it("serialises 8 bytes per instruction, little-endian", () => {
    const bytes = seccompFilter(arch)!;
    expect(bytes.length).toBe(program.length * 8);
    expect(bytes.readUInt16LE(0)).toBe(0x20);
    expect(bytes.readUInt32LE(4)).toBe(4);
    expect(bytes.readUInt32LE(bytes.length - 4)).toBe(EPERM);
  });
});

it("the x32 ABI's numbers (bit 30) are refused on x64, so the table cannot be bypassed", () => {
  expect(run(seccompProgram("x64")!, { nr: 0x40000000 | 0, arch: AUDIT.x64 })).toBe(EPERM);
});

it("no table for another architecture: no filter (the sandbox says so in its description)", () => {
  expect(seccompProgram("riscv64")).toBeUndefined();
  expect(seccompFilter("ia32")).toBeUndefined();
});

describe.runIf(seccompFilter() !== undefined)("the filter's file", () => {
  it("is written once per process into a private directory, shared by every sandbox, and written again if removed", () => {
    const file = writeSeccompFile()!;
    expect(writeSeccompFile()).toBe(file);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    expect(readFileSync(file)).toEqual(Buffer.from(seccompFilter()!));
    rmSync(dirname(file), { recursive: true, force: true });
    const again = writeSeccompFile()!;
    expect(again).not.toBe(file);
    expect(existsSync(again)).toBe(true);
  });
});
