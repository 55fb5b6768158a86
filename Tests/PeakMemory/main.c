// pipelinehost-peak-memory OUT COMMAND [ARG...]: runs COMMAND and writes its peak resident set
// (wait4's ru_maxrss, in kilobytes) to OUT; exits with COMMAND's status, or 128 + its signal.
//
// For the memory-bound tests (TestSupport's MeasuredProcess). Spawned straight from the test
// runner, a child reports the runner's own peak: Linux keeps the high-water mark of the address
// space a child had before exec, and posix_spawn's child shares the runner's until then. A
// fork of this small process starts from its own few hundred kilobytes instead.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: pipelinehost-peak-memory OUT COMMAND [ARG...]\n");
        return 2;
    }
    pid_t child = fork();
    if (child < 0) { perror("fork"); return 2; }
    if (child == 0) {
        // A test that gives up on us (a timeout kills this process) takes the command with it.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execv(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    if (wait4(child, &status, 0, &usage) < 0) { perror("wait4"); return 2; }
    FILE *out = fopen(argv[1], "w");
    if (!out) { perror(argv[1]); return 2; }
    fprintf(out, "%ld", usage.ru_maxrss);
    fclose(out);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
