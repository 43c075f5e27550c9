import { describe, expect, it } from 'vitest';
import { hostnameOf } from '../../src/shared/hostname.ts';

describe('hostnameOf, the hostname of a Host header as every listener compares it', () => {
  it('drops the port', () => {
    expect(hostnameOf('example.com:8080')).toBe('example.com');
    expect(hostnameOf('127.0.0.1:80')).toBe('127.0.0.1');
    expect(hostnameOf('example.com:')).toBe('example.com');
  });

  it('lowercases', () => {
    expect(hostnameOf('Example.COM')).toBe('example.com');
    expect(hostnameOf('WWW.Example.Com:443')).toBe('www.example.com');
  });

  it('drops one trailing dot, before or without a port', () => {
    expect(hostnameOf('example.com.')).toBe('example.com');
    expect(hostnameOf('Example.com.:8080')).toBe('example.com');
  });

  it('keeps an IPv6 literal in its brackets, with or without a port', () => {
    expect(hostnameOf('[::1]:8080')).toBe('[::1]');
    expect(hostnameOf('[::1]')).toBe('[::1]');
    expect(hostnameOf('[2001:DB8::A]:443')).toBe('[2001:db8::a]');
  });

  it('is empty for a missing or empty header', () => {
    expect(hostnameOf(undefined)).toBe('');
    expect(hostnameOf('')).toBe('');
    expect(hostnameOf('   ')).toBe('');
  });

  it('gives a malformed header back as something no configured name equals', () => {
    expect(hostnameOf('[::1')).toBe('[::1');
    expect(hostnameOf(' example.com ')).toBe('example.com');
  });
});
