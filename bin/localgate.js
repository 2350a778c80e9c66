#!/usr/bin/env node
'use strict';

const Cli = require('../dist/cli');


const io = {
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
    tty: process.stdout.isTTY === true
};

Cli.main(process.argv.slice(2), process.env, io).then((code) => {

    process.exitCode = code;
});
