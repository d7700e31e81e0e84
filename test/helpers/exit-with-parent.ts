// Preloaded into every cluster process: the harness holds its stdin open, so when the pipe
// breaks the harness is gone, however it died. SIGTERM then runs the script's own graceful
// shutdown, or ends the process if it has none.
process.stdin.on("end", () => process.kill(process.pid, "SIGTERM")).resume();
