"""commit"""
