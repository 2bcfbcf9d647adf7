import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The seccomp filter bubblewrap applies to a sandboxed command (`bwrap --seccomp FD`): a classic
 * BPF program, generated here (no libseccomp, no native helper), that makes the usual local-exploit
 * entry points fail with EPERM — kernel attack surface no command needs, not a new boundary
 * (the namespaces and dropped capabilities already make most of them fail). Syscalls of another
 * architecture (i386 through int 0x80 on x86_64) kill the process, and the x32 ABI's numbers
 * fail, so the table cannot be bypassed by numbering. docs/sandbox.md, "seccomp".
 */

/** The syscalls refused, by name (the table below has their numbers per architecture). */
export const seccompBlocked = [
  "bpf",
  "perf_event_open",
  "userfaultfd",
  "keyctl",
  "add_key",
  "request_key",
  "io_uring_setup",
  "io_uring_enter",
  "io_uring_register",
  "kexec_load",
  "kexec_file_load",
  "init_module",
  "finit_module",
  "delete_module",
  "mount",
  "umount2",
  "pivot_root",
  "open_tree",
  "move_mount",
  "fsopen",
  "fsconfig",
  "fsmount",
  "fspick",
  "mount_setattr",
  "unshare",
  "setns",
  "open_by_handle_at",
  "swapon",
  "swapoff",
  "reboot",
  "acct",
  "quotactl",
] as const;

type Blocked = (typeof seccompBlocked)[number];

/** Numbers from the kernel's uapi headers (asm/unistd_64.h; asm-generic/unistd.h for aarch64). */
const numbers: Record<Blocked, [x64: number, arm64: number]> = {
  bpf: [321, 280],
  perf_event_open: [298, 241],
  userfaultfd: [323, 282],
  keyctl: [250, 219],
  add_key: [248, 217],
  request_key: [249, 218],
  io_uring_setup: [425, 425],
  io_uring_enter: [426, 426],
  io_uring_register: [427, 427],
  kexec_load: [246, 104],
  kexec_file_load: [320, 294],
  init_module: [175, 105],
  finit_module: [313, 273],
  delete_module: [176, 106],
  mount: [165, 40],
  umount2: [166, 39],
  pivot_root: [155, 41],
  open_tree: [428, 428],
  move_mount: [429, 429],
  fsopen: [430, 430],
  fsconfig: [431, 431],
  fsmount: [432, 432],
  fspick: [433, 433],
  mount_setattr: [442, 442],
  unshare: [272, 97],
  setns: [308, 268],
  open_by_handle_at: [304, 265],
  swapon: [167, 224],
  swapoff: [168, 225],
  reboot: [169, 142],
  acct: [163, 89],
  quotactl: [179, 60],
};

const arches = {
  x64: { audit: 0xc000003e, column: 0, x32: true },
  arm64: { audit: 0xc00000b7, column: 1, x32: false },
} as const;

// Classic BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
export const SECCOMP_RET_ALLOW = 0x7fff0000;
export const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const EPERM = 1;
const X32_SYSCALL_BIT = 0x40000000;

/** One classic-BPF instruction (struct sock_filter). */
export interface BpfInstruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/** The filter's instructions for `arch` (Node's `process.arch`); undefined where there is no table (the sandbox then runs without one, and says so). */
export function seccompProgram(arch: string = process.arch): BpfInstruction[] | undefined {
  const target = arches[arch as keyof typeof arches];
  if (!target) return undefined;
  const nrs = seccompBlocked.map((name) => numbers[name][target.column]);
  const program: BpfInstruction[] = [
    { code: LD_W_ABS, jt: 0, jf: 0, k: 4 }, // seccomp_data.arch
    { code: JEQ_K, jt: 1, jf: 0, k: target.audit },
    { code: RET_K, jt: 0, jf: 0, k: SECCOMP_RET_KILL_PROCESS },
    { code: LD_W_ABS, jt: 0, jf: 0, k: 0 }, // seccomp_data.nr
  ];
  // Jumps count the instructions after this one up to the EPERM return, the last instruction.
  const checks = (target.x32 ? 1 : 0) + nrs.length;
  if (target.x32) program.push({ code: JGE_K, jt: checks, jf: 0, k: X32_SYSCALL_BIT });
  nrs.forEach((nr, i) => program.push({ code: JEQ_K, jt: nrs.length - i, jf: 0, k: nr }));
  program.push({ code: RET_K, jt: 0, jf: 0, k: SECCOMP_RET_ALLOW }, { code: RET_K, jt: 0, jf: 0, k: SECCOMP_RET_ERRNO | EPERM });
  return program;
}

/** The program as the kernel takes it: 8 bytes per instruction, little-endian (both tables are little-endian architectures). */
export function seccompFilter(arch: string = process.arch): Buffer | undefined {
  const program = seccompProgram(arch);
  if (!program) return undefined;
  const out = Buffer.alloc(program.length * 8);
  program.forEach((ins, i) => {
    out.writeUInt16LE(ins.code, i * 8);
    out.writeUInt8(ins.jt, i * 8 + 2);
    out.writeUInt8(ins.jf, i * 8 + 3);
    out.writeUInt32LE(ins.k, i * 8 + 4);
  });
  return out;
}

/** A refused syscall's number on `arch` (tests call it by number, e.g. with perl's `syscall`); undefined where there is no table. */
export function seccompSyscallNumber(name: Blocked, arch: string = process.arch): number | undefined {
  const target = arches[arch as keyof typeof arches];
  return target ? numbers[name][target.column] : undefined;
}

/** This process's filter file, shared by all its sandboxes (the filter never changes). */
let written: string | undefined;

/**
 * The seccomp filter in a private (0700) directory, written once per process and shared by
 * every sandbox it creates (one per `CommandSandbox.create` left a directory per sandbox in
 * /tmp whenever the process ended without its exit event: killed, or a test worker); removed at
 * exit. Written again if something removed it. Undefined on an architecture without a syscall
 * table here.
 */
export function writeSeccompFile(): string | undefined {
  if (written !== undefined && existsSync(written)) return written;
  const filter = seccompFilter();
  if (!filter) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "agentkit-seccomp-"));
  const file = join(dir, "filter.bpf");
  writeFileSync(file, filter, { mode: 0o600 });
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  written = file;
  return file;
}
