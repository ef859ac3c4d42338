// Preloaded (node --import) into server-everything's Streamable HTTP transport, which listens
// on every interface: its servers listen on 127.0.0.1 only (tests stay on loopback).
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    args.splice(1, typeof args[1] === 'string' ? 1 : 0, '127.0.0.1');
  }
  return listen.apply(this, args);
};
