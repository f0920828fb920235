// Jest global teardown: stops the server ferrodyn/jest-setup started.
'use strict';

module.exports = async function teardown() {
  await globalThis.__FERRODYN_SERVER__?.stop();
};
