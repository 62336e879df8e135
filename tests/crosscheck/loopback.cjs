// Preloaded into Node (node -r loopback.cjs): every listener binds 127.0.0.1, whatever the program asks.
// The TypeScript reference server listens on all interfaces; the cross-check runs stay on loopback.
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || typeof args[0] === "string") {
    const port = args[0];
    const cb = args.find((a) => typeof a === "function");
    return listen.call(this, { port: Number(port), host: "127.0.0.1" }, cb);
  }
  return listen.apply(this, args);
};
