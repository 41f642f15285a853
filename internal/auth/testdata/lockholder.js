// Plays pi's side of the auth.json lock with proper-lockfile, the library
// pi uses, with pi's settings (stale 30 s, the lock named after the real
// path, its time refreshed every 15 s). Commands come one per line on
// stdin; each answer is one line on stdout.
//
//   lock               take the lock (no retries), answer "locked" or the error code
//   write PROVIDER JSON   replace PROVIDER's entry of auth.json (2-space JSON, no
//                      trailing newline, in place), answer "written"
//   unlock             release, answer "unlocked"
//   check              answer "held" or "free" (is the file locked by anyone?)
//   exit               end
const fs = require("fs");
const readline = require("readline");
const lockfile = require("proper-lockfile");

const file = process.argv[2];
let release = null;
const say = (s) => process.stdout.write(s + "\n");

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", async (line) => {
  const [cmd, ...rest] = line.split(" ");
  try {
    if (cmd === "lock") {
      release = await lockfile.lock(file, {
        stale: 30000,
        retries: 0,
        realpath: true,
        onCompromised: (err) => say("compromised " + err.message),
      });
      say("locked");
    } else if (cmd === "write") {
      const provider = rest[0];
      const entry = JSON.parse(rest.slice(1).join(" "));
      const data = JSON.parse(fs.readFileSync(file, "utf8"));
      data[provider] = entry;
      fs.writeFileSync(file, JSON.stringify(data, null, 2), "utf8");
      say("written");
    } else if (cmd === "unlock") {
      await release();
      release = null;
      say("unlocked");
    } else if (cmd === "check") {
      say((await lockfile.check(file, { stale: 30000, realpath: true })) ? "held" : "free");
    } else if (cmd === "exit") {
      process.exit(0);
    }
  } catch (err) {
    say(err.code || String(err));
  }
});
