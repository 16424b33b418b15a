# Replacements for the vDSO's clock functions, injected into a process by
# package vdsoclock. They ask the kernel for the time with a system call
# (the vDSO entries they replace now jump here) and add the offset of the
# clock asked for, from the table "deltas". The page holds the table and
# the owner's name first, then the code, which finds them relative to
# itself. Assembled by scripts/vdsoclock-gen into fake_amd64.go.
	.intel_syntax noprefix
	.text
	.globl deltas, owner, fake_clock_gettime, fake_gettimeofday, fake_time
deltas:	.fill 16, 8, 0	# offset in nanoseconds, signed, of clock id i (0 realtime, 1 monotonic, ...)
owner:	.fill 48, 1, 0	# who patched the process: its harness's "pid:start time", NUL-padded

# int clock_gettime(clockid_t clk /* edi */, struct timespec *ts /* rsi */)
fake_clock_gettime:
	mov eax, 228		# SYS_clock_gettime
	syscall
	test rax, rax
	jnz 1f			# an error: return it as the vDSO would
	cmp edi, 15
	ja 0f			# no offset (a CPU-time clock: a negative id)
	mov eax, edi
	lea rcx, [rip + deltas]
	mov rcx, [rcx + rax*8]
	test rcx, rcx
	jz 0f
	mov rax, [rsi]
	imul rax, rax, 1000000000
	add rax, [rsi + 8]
	add rax, rcx
	cqo
	mov rcx, 1000000000
	idiv rcx
	test rdx, rdx
	jns 2f
	add rdx, rcx
	dec rax
2:	mov [rsi], rax
	mov [rsi + 8], rdx
0:	xor eax, eax
1:	ret

# int gettimeofday(struct timeval *tv /* rdi */, struct timezone *tz /* rsi */)
fake_gettimeofday:
	mov eax, 96		# SYS_gettimeofday
	syscall
	test rax, rax
	jnz 1f
	test rdi, rdi
	jz 0f
	mov rax, [rip + deltas]	# CLOCK_REALTIME's
	test rax, rax
	jz 0f
	cqo
	mov rcx, 1000
	idiv rcx		# the offset in microseconds
	mov r8, rax
	mov rax, [rdi]
	imul rax, rax, 1000000
	add rax, [rdi + 8]
	add rax, r8
	cqo
	mov rcx, 1000000
	idiv rcx
	test rdx, rdx
	jns 2f
	add rdx, rcx
	dec rax
2:	mov [rdi], rax
	mov [rdi + 8], rdx
0:	xor eax, eax
1:	ret

# time_t time(time_t *t /* rdi */)
fake_time:
	mov eax, 201		# SYS_time
	syscall
	cmp rax, -4096
	ja 1f			# an error
	mov r8, rax
	mov rax, [rip + deltas]	# CLOCK_REALTIME's
	cqo
	mov rcx, 1000000000
	idiv rcx
	add rax, r8
	test rdi, rdi
	jz 1f
	mov [rdi], rax
1:	ret
