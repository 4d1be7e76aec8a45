"""The system calls a caged run may not make, as a seccomp filter (classic BPF).

A run is one user on the machine as far as the kernel's permission checks go (the same uid as
ourobot's process, or root without capabilities), so what permissions alone would allow it
must not be left to them:

- `ptrace`, `process_vm_readv`/`writev`, `pidfd_getfd`: reading or steering another process
  (the sandbox's own process 1, which ourobot waits for; ourobot itself without the sandbox);
- `keyctl`, `add_key`, `request_key`: the kernel keyrings of the user ourobot runs as, which a
  new session does not leave behind;
- `bpf`, `userfaultfd`, `perf_event_open`: kernel attack surface no test needs.

Each is answered EPERM, for the native architecture and the compatible ones (i386 on x86_64,
and x32's numbering), so a 32-bit call cannot slip past. The program is given to bubblewrap
(`--seccomp FD`) or, without it, installed by the launcher before the command starts.
"""

from __future__ import annotations

import errno
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003
AUDIT_ARCH_AARCH64 = 0xC00000B7
X32_SYSCALL_BIT = 0x40000000

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_ALLOW = 0x7FFF0000
_DENY = 0x00050000 | errno.EPERM
_OFFSET_NR, _OFFSET_ARCH = 0, 4

# Per architecture: ptrace, process_vm_readv, process_vm_writev, pidfd_getfd, keyctl, add_key,
# request_key, bpf, userfaultfd, perf_event_open.
DENIED: dict[int, tuple[int, ...]] = {
    AUDIT_ARCH_X86_64: (101, 310, 311, 438, 250, 248, 249, 321, 323, 298),
    AUDIT_ARCH_I386: (26, 347, 348, 438, 288, 286, 287, 357, 374, 336),
    AUDIT_ARCH_AARCH64: (117, 270, 271, 438, 219, 217, 218, 280, 282, 241),
}

Instruction = tuple[int, int, int, int]  # code, jump if true, jump if false, k


def _arch_block(arch: int) -> list[Instruction]:
    """Load the call's number; deny the listed ones (and, on x86_64, every x32 call)."""
    numbers = DENIED[arch]
    block: list[Instruction] = [(_LD_W_ABS, 0, 0, _OFFSET_NR)]
    checks = [(_JGE_K, X32_SYSCALL_BIT)] if arch == AUDIT_ARCH_X86_64 else []
    checks += [(_JEQ_K, number) for number in numbers]
    for index, (code, k) in enumerate(checks):
        to_deny = len(checks) - index  # past the remaining checks and the allow
        block.append((code, to_deny, 0, k))
    block += [(_RET_K, 0, 0, _ALLOW), (_RET_K, 0, 0, _DENY)]
    return block


def program() -> list[Instruction]:
    """The whole filter: dispatch on the architecture, then that architecture's block."""
    blocks = [_arch_block(arch) for arch in DENIED]
    dispatch: list[Instruction] = [(_LD_W_ABS, 0, 0, _OFFSET_ARCH)]
    jumps = len(DENIED)
    start = 0
    for index, arch in enumerate(DENIED):
        # From this jump: the jumps after it, the unknown-architecture allow, earlier blocks.
        dispatch.append((_JEQ_K, (jumps - index - 1) + 1 + start, 0, arch))
        start += len(blocks[index])
    dispatch.append((_RET_K, 0, 0, _ALLOW))
    return [*dispatch, *(instruction for block in blocks for instruction in block)]


def compiled() -> bytes:
    """The filter as `struct sock_filter[]`, in the machine's byte order."""
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program())
