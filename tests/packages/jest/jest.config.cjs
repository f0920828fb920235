module.exports = {
  globalSetup: 'ferrodyn/jest-setup',
  globalTeardown: 'ferrodyn/jest-teardown',
  testMatch: ['**/*.test.cjs'],
};
