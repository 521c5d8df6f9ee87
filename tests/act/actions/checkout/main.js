// The checkout stand-in's main stage (action.yml says what it reproduces).
'use strict';
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

function input(name) {
  return process.env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] || '';
}

function git(dir, args) {
  execFileSync('git', ['-C', dir, ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
}

try {
  const origin = process.env.AGENT_TEAM_HARNESS_ORIGIN;
  if (!origin) throw new Error('the harness names its origin repository (AGENT_TEAM_HARNESS_ORIGIN)');
  const dest = path.resolve(process.env.GITHUB_WORKSPACE, input('path'));
  const ref = input('ref') || process.env.GITHUB_SHA;
  const depth = input('fetch-depth');
  const persist = input('persist-credentials');
  fs.rmSync(dest, { recursive: true, force: true });
  fs.mkdirSync(dest, { recursive: true });
  // Saved before the clone, as the real action saves it: the post step cleans whatever is there.
  fs.appendFileSync(process.env.GITHUB_STATE, `isPost=true\nrepositoryPath=${dest}\n`);
  git(dest, ['init', '-q']);
  git(dest, ['remote', 'add', 'origin', origin]);
  if (depth === '0') {
    // Every branch, then the ref alone: FETCH_HEAD is then the ref, as the real action checks
    // out the ref (one fetch of both would leave the first branch first in FETCH_HEAD).
    git(dest, ['fetch', '-q', 'origin', '+refs/heads/*:refs/remotes/origin/*']);
    git(dest, ['fetch', '-q', 'origin', ref]);
  } else {
    git(dest, ['fetch', '-q', '--depth', depth, 'origin', ref]);
  }
  git(dest, ['checkout', '-q', '--detach', 'FETCH_HEAD']);
  if (persist === 'true') {
    const header = Buffer.from(`x-access-token:${input('token')}`).toString('base64');
    git(dest, ['config', '--local', `http.${process.env.GITHUB_SERVER_URL}/.extraheader`, `AUTHORIZATION: basic ${header}`]);
  }
  console.log(`checked out ${ref} into ${input('path') || '.'} (persist-credentials: ${persist})`);
  // The step's user as `id` reports it, for the harness's scenario documents (not the real
  // action's output).
  const id = (flag) => execFileSync('id', [flag], { encoding: 'utf8' }).trim();
  let sudo = 'passwordless sudo';
  try {
    execFileSync('sudo', ['-n', 'true'], { stdio: 'ignore' });
  } catch {
    sudo = 'no sudo';
  }
  console.log(`harness: the step ran as ${id('-un')} (uid ${id('-u')}, gid ${id('-g')}, groups ${id('-G')}, ${sudo})`);
} catch (error) {
  console.log(`::error::${error.message}`);
  process.exitCode = 1;
}
