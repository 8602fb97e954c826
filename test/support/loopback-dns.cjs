/**
 * Preloaded into dist/main.js (NODE_OPTIONS=--require) by tests whose run
 * would otherwise reach a provider's public API: every lookup of a name under
 * AGENT_RUNNER_TEST_LOOPBACK_DOMAINS (comma-separated) answers 127.77.0.1,
 * where nothing listens, and is appended to AGENT_RUNNER_TEST_DNS_LOG. Nothing
 * leaves the machine, and the test can see which public host the run tried.
 */
"use strict";
const dns = require("node:dns");
const fs = require("node:fs");

const domains = (process.env.AGENT_RUNNER_TEST_LOOPBACK_DOMAINS || "").split(",").map((d) => d.trim()).filter(Boolean);
const logFile = process.env.AGENT_RUNNER_TEST_DNS_LOG;
const original = dns.lookup;

dns.lookup = function lookup(hostname, options, callback) {
  const name = String(hostname).toLowerCase();
  if (!domains.some((d) => name === d || name.endsWith(`.${d}`))) return original.call(this, hostname, options, callback);
  if (logFile) fs.appendFileSync(logFile, `${name}\n`);
  const cb = typeof options === "function" ? options : callback;
  const all = typeof options === "object" && options !== null && options.all;
  process.nextTick(() => (all ? cb(null, [{ address: "127.77.0.1", family: 4 }]) : cb(null, "127.77.0.1", 4)));
  return {};
};
