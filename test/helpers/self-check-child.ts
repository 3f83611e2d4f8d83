/**
 * A process that only runs the self-check, idle, for the seconds given, then prints its verdict
 * as one JSON line. test/loopback/self-check.test.ts stops and resumes it from outside (SIGSTOP /
 * SIGCONT): lateness with an idle loop, as when a machine wakes a process late.
 */
import { SelfCheck } from "../../src/core/load/self-check.ts";

const seconds = Number(process.argv[2] ?? 2);
const check = new SelfCheck();
check.start();
process.stdout.write("started\n");
setTimeout(() => {
  process.stdout.write(`${JSON.stringify(check.stop())}\n`);
}, seconds * 1000);
