/* bound_names N: spins N rounds in hot() (not inlined; tests rename it to a
 * name of many MiB with objcopy --redefine-syms), then N rounds in deep(),
 * whose loop lies at the bottom of a chain of 70 always-inlined functions
 * (in70 calls in69 ... in1, all inlined into deep()): pfsym's bounds on a
 * name's bytes (--max-name) and on an address's inline frames
 * (--max-inline). A test workload: build with -O2 -g. */
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) void hot(long n)
{
	for (long r = 0; r < n; r++)
		for (unsigned i = 0; i < 200000; i++)
			sink += i * 7 + (sink >> 3);
}

#define AI static inline __attribute__((always_inline))
AI void in1(long n)
{
	for (long r = 0; r < n; r++)
		for (unsigned i = 0; i < 200000; i++)
			sink += i * 5 + (sink >> 2);
}
AI void in2(long n)
{
	sink += 2;
	in1(n);
	sink -= 2;
}
AI void in3(long n)
{
	sink += 3;
	in2(n);
	sink -= 3;
}
AI void in4(long n)
{
	sink += 4;
	in3(n);
	sink -= 4;
}
AI void in5(long n)
{
	sink += 5;
	in4(n);
	sink -= 5;
}
AI void in6(long n)
{
	sink += 6;
	in5(n);
	sink -= 6;
}
AI void in7(long n)
{
	sink += 7;
	in6(n);
	sink -= 7;
}
AI void in8(long n)
{
	sink += 8;
	in7(n);
	sink -= 8;
}
AI void in9(long n)
{
	sink += 9;
	in8(n);
	sink -= 9;
}
AI void in10(long n)
{
	sink += 10;
	in9(n);
	sink -= 10;
}
AI void in11(long n)
{
	sink += 11;
	in10(n);
	sink -= 11;
}
AI void in12(long n)
{
	sink += 12;
	in11(n);
	sink -= 12;
}
AI void in13(long n)
{
	sink += 13;
	in12(n);
	sink -= 13;
}
AI void in14(long n)
{
	sink += 14;
	in13(n);
	sink -= 14;
}
AI void in15(long n)
{
	sink += 15;
	in14(n);
	sink -= 15;
}
AI void in16(long n)
{
	sink += 16;
	in15(n);
	sink -= 16;
}
AI void in17(long n)
{
	sink += 17;
	in16(n);
	sink -= 17;
}
AI void in18(long n)
{
	sink += 18;
	in17(n);
	sink -= 18;
}
AI void in19(long n)
{
	sink += 19;
	in18(n);
	sink -= 19;
}
AI void in20(long n)
{
	sink += 20;
	in19(n);
	sink -= 20;
}
AI void in21(long n)
{
	sink += 21;
	in20(n);
	sink -= 21;
}
AI void in22(long n)
{
	sink += 22;
	in21(n);
	sink -= 22;
}
AI void in23(long n)
{
	sink += 23;
	in22(n);
	sink -= 23;
}
AI void in24(long n)
{
	sink += 24;
	in23(n);
	sink -= 24;
}
AI void in25(long n)
{
	sink += 25;
	in24(n);
	sink -= 25;
}
AI void in26(long n)
{
	sink += 26;
	in25(n);
	sink -= 26;
}
AI void in27(long n)
{
	sink += 27;
	in26(n);
	sink -= 27;
}
AI void in28(long n)
{
	sink += 28;
	in27(n);
	sink -= 28;
}
AI void in29(long n)
{
	sink += 29;
	in28(n);
	sink -= 29;
}
AI void in30(long n)
{
	sink += 30;
	in29(n);
	sink -= 30;
}
AI void in31(long n)
{
	sink += 31;
	in30(n);
	sink -= 31;
}
AI void in32(long n)
{
	sink += 32;
	in31(n);
	sink -= 32;
}
AI void in33(long n)
{
	sink += 33;
	in32(n);
	sink -= 33;
}
AI void in34(long n)
{
	sink += 34;
	in33(n);
	sink -= 34;
}
AI void in35(long n)
{
	sink += 35;
	in34(n);
	sink -= 35;
}
AI void in36(long n)
{
	sink += 36;
	in35(n);
	sink -= 36;
}
AI void in37(long n)
{
	sink += 37;
	in36(n);
	sink -= 37;
}
AI void in38(long n)
{
	sink += 38;
	in37(n);
	sink -= 38;
}
AI void in39(long n)
{
	sink += 39;
	in38(n);
	sink -= 39;
}
AI void in40(long n)
{
	sink += 40;
	in39(n);
	sink -= 40;
}
AI void in41(long n)
{
	sink += 41;
	in40(n);
	sink -= 41;
}
AI void in42(long n)
{
	sink += 42;
	in41(n);
	sink -= 42;
}
AI void in43(long n)
{
	sink += 43;
	in42(n);
	sink -= 43;
}
AI void in44(long n)
{
	sink += 44;
	in43(n);
	sink -= 44;
}
AI void in45(long n)
{
	sink += 45;
	in44(n);
	sink -= 45;
}
AI void in46(long n)
{
	sink += 46;
	in45(n);
	sink -= 46;
}
AI void in47(long n)
{
	sink += 47;
	in46(n);
	sink -= 47;
}
AI void in48(long n)
{
	sink += 48;
	in47(n);
	sink -= 48;
}
AI void in49(long n)
{
	sink += 49;
	in48(n);
	sink -= 49;
}
AI void in50(long n)
{
	sink += 50;
	in49(n);
	sink -= 50;
}
AI void in51(long n)
{
	sink += 51;
	in50(n);
	sink -= 51;
}
AI void in52(long n)
{
	sink += 52;
	in51(n);
	sink -= 52;
}
AI void in53(long n)
{
	sink += 53;
	in52(n);
	sink -= 53;
}
AI void in54(long n)
{
	sink += 54;
	in53(n);
	sink -= 54;
}
AI void in55(long n)
{
	sink += 55;
	in54(n);
	sink -= 55;
}
AI void in56(long n)
{
	sink += 56;
	in55(n);
	sink -= 56;
}
AI void in57(long n)
{
	sink += 57;
	in56(n);
	sink -= 57;
}
AI void in58(long n)
{
	sink += 58;
	in57(n);
	sink -= 58;
}
AI void in59(long n)
{
	sink += 59;
	in58(n);
	sink -= 59;
}
AI void in60(long n)
{
	sink += 60;
	in59(n);
	sink -= 60;
}
AI void in61(long n)
{
	sink += 61;
	in60(n);
	sink -= 61;
}
AI void in62(long n)
{
	sink += 62;
	in61(n);
	sink -= 62;
}
AI void in63(long n)
{
	sink += 63;
	in62(n);
	sink -= 63;
}
AI void in64(long n)
{
	sink += 64;
	in63(n);
	sink -= 64;
}
AI void in65(long n)
{
	sink += 65;
	in64(n);
	sink -= 65;
}
AI void in66(long n)
{
	sink += 66;
	in65(n);
	sink -= 66;
}
AI void in67(long n)
{
	sink += 67;
	in66(n);
	sink -= 67;
}
AI void in68(long n)
{
	sink += 68;
	in67(n);
	sink -= 68;
}
AI void in69(long n)
{
	sink += 69;
	in68(n);
	sink -= 69;
}
AI void in70(long n)
{
	sink += 70;
	in69(n);
	sink -= 70;
}

__attribute__((noinline)) void deep(long n)
{
	in70(n);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	hot(n);
	deep(n);
	return 0;
}
