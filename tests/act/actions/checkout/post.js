// The checkout stand-in's post stage: actions/checkout v7.0.1's cleanup, command for command
// (src/git-source-provider.ts `cleanup`, src/git-auth-helper.ts `removeAuth`, `removeSsh`,
// `removeToken`, `removeSubmoduleGitConfig`, `removeIncludeIfCredentials`, and
// src/git-command-manager.ts `submoduleForeach`, `getSubmoduleConfigPaths`). A failing command is
// a warning, never a failed step, as in the real cleanup.
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const repositoryPath = process.env.STATE_repositoryPath || '';
const SSH_COMMAND_KEY = 'core.sshCommand';

// regexpHelper.escape
function escape(value) {
  return value.replace(/[^a-zA-Z0-9_]/g, x => `\\${x}`);
}

let env = { ...process.env, GIT_TERMINAL_PROMPT: '0', GCM_INTERACTIVE: 'Never' };

// execGit: the command line is printed as @actions/exec prints it; a non-zero exit throws unless
// allowed.
function git(args, allowAllExitCodes = false) {
  console.log(`[command]/usr/bin/git ${args.join(' ')}`);
  const out = spawnSync('git', args, { cwd: repositoryPath, env, encoding: 'utf8' });
  if (out.stdout) process.stdout.write(out.stdout);
  if (out.stderr) process.stdout.write(out.stderr);
  if (out.status !== 0 && !allowAllExitCodes) {
    throw new Error(`The process '/usr/bin/git' failed with exit code ${out.status}`);
  }
  return { exitCode: out.status, stdout: out.stdout || '' };
}

function configExists(key) {
  return git(['config', '--local', '--name-only', '--get-regexp', escape(key)], true).exitCode === 0;
}

function removeGitConfig(key) {
  if (configExists(key) && git(['config', '--local', '--unset-all', key], true).exitCode !== 0) {
    console.log(`::warning::Failed to remove '${key}' from the git config`);
  }
}

function submoduleForeach(command) {
  return git(['submodule', 'foreach', '--recursive', command]).stdout;
}

function removeSubmoduleGitConfig(key) {
  submoduleForeach(
    `sh -c "git config --local --name-only --get-regexp '${escape(key)}' && git config --local --unset-all '${key}' || :"`
  );
}

function removeIncludeIfCredentials(configPath) {
  const found = [];
  try {
    const where = configPath ? ['--file', configPath] : ['--local'];
    const keys = git(['config', ...where, '--name-only', '--get-regexp', '^includeIf\\.gitdir:'], true);
    for (const key of keys.exitCode === 0 ? keys.stdout.split('\n').filter(Boolean) : []) {
      const values = git(['config', ...where, '--get-all', key], true);
      for (const value of values.stdout.split('\n').filter(Boolean)) {
        if (/git-credentials-[0-9a-f-]+\.config$/i.test(value)) {
          found.push(value);
          git(['config', ...where, '--fixed-value', '--unset', key, value], true);
        }
      }
    }
  } catch (error) {
    console.log(`##[debug]Error during includeIf cleanup: ${error.message}`);
  }
  return found;
}

function cleanup() {
  if (!repositoryPath || !fs.existsSync(path.join(repositoryPath, '.git', 'config'))) {
    return;
  }
  let tempHome = '';
  try {
    if ((process.env['INPUT_SET-SAFE-DIRECTORY'] || 'true') === 'true') {
      // configureTempGlobalConfig: a temporary HOME whose global config adds the path.
      tempHome = fs.mkdtempSync(path.join(process.env.RUNNER_TEMP || os.tmpdir(), 'checkout-home-'));
      const global = path.join(os.homedir(), '.gitconfig');
      if (fs.existsSync(global)) fs.copyFileSync(global, path.join(tempHome, '.gitconfig'));
      env = { ...env, HOME: tempHome };
      console.log('Adding repository directory to the temporary git global config as a safe directory');
      git(['config', '--global', '--add', 'safe.directory', repositoryPath], true);
    }
    // removeAuth: removeSsh, then removeToken.
    console.log('Removing SSH command configuration');
    removeGitConfig(SSH_COMMAND_KEY);
    removeSubmoduleGitConfig(SSH_COMMAND_KEY);
    const tokenKey = `http.${new URL(process.env.GITHUB_SERVER_URL || 'https://github.com').origin}/.extraheader`;
    console.log('Removing HTTP extra header');
    removeGitConfig(tokenKey);
    removeSubmoduleGitConfig(tokenKey);
    console.log('Removing includeIf entries pointing to credentials config files');
    removeIncludeIfCredentials();
    const paths =
      submoduleForeach('git config --local --show-origin --name-only --get-regexp remote.origin.url').match(
        /(?<=(^|\n)file:)[^\t]+(?=\tremote\.origin\.url)/g
      ) || [];
    for (const configPath of paths) {
      removeIncludeIfCredentials(configPath);
    }
  } finally {
    if (tempHome) fs.rmSync(tempHome, { recursive: true, force: true });
  }
}

try {
  cleanup();
} catch (error) {
  console.log(`::warning::${error.message}`);
}
