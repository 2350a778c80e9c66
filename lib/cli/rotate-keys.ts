import { rotatePayKeys } from '../storage';
import type { Command } from './command';
import { recordPair } from './provision';


export const command: Command = {
    synopsis: 'localgate rotate-keys pay [--data-dir D]',
    flags: ['data-dir', 'memory'],
    explain: 'Records a new key pair in the provisioned pay database, retiring the old one, and prints the three settings.',
    run: (settings, args, values, io) => recordPair(settings, args, io, rotatePayKeys, true)
};
